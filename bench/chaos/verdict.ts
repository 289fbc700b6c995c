/**
 * The promises a chaos run is judged by, from the recording alone (pure):
 *  - no completed stage ran twice: for each node × package × stage, no Job after one that
 *    succeeded; and at most one NodeOp and one Job, except for the stage a fault destroyed while it
 *    ran (a hand-deleted Job: one more Job; a hand-deleted NodeOp: one more NodeOp and Job);
 *  - the budget was never exceeded (most nodes disrupted at once, see cluster-record.ts);
 *  - no node is left cordoned, tainted or marked by the operator;
 *  - how long after each fault the operator acted again.
 */
import { summarize, type Summary } from '../stats.js';
import type { ClusterRecord, NodeSnapshot, StageStart } from './cluster-record.js';

export interface Fault {
  kind: string;
  /** The node it hit, for faults on one node. */
  node?: string;
  /** `node/package/stage` of the running stage it destroyed (a hand-deleted Job or NodeOp). */
  interrupted?: string;
  /** What destroying the stage costs: the kinds that start once more. */
  restarts?: StageStart['kind'][];
  /** Date.now() when it was injected, and when it was over (process restarted, server ready, watch saw it). */
  at: number;
  endedAt: number;
  /** When the operator acted again; when unset, the first operator change seen after `from` (on `node`, if set). */
  recoveredAt?: number;
  /** Where to look for that change from, when not endedAt (a failover: from the takeover). */
  from?: number;
}

export interface Verdict {
  stageStarts: number;
  /** Stages that started again after one of their Jobs had succeeded. */
  stagesRunTwice: string[];
  /** Stages started more often than the faults explain. */
  unexplainedStarts: string[];
  /** Stages a fault destroyed that started again as expected. */
  rerunsAfterDeletion: string[];
  maxDisrupted: number;
  budget: number;
  leftCordonedOrTainted: string[];
  /** Nodes uncordoned but still carrying the controller-manager's unschedulable taint at the end (not the operator's to remove). */
  mirroredTaintLeft: string[];
  recoveryMs: Summary;
  /** Each fault's recovery, in the order injected (NaN: the operator never acted after it). */
  recoveries: { kind: string; ms: number }[];
  /** Every broken promise, in words; empty when the run kept them all. */
  violations: string[];
}

export const stageKey = (s: Pick<StageStart, 'node' | 'package' | 'stage'>): string =>
  `${s.node}/${s.package}/${s.stage}`;

/** What the operator owns on a node that must be gone once the rollout is over: its cordon, its taints, its cordon bookkeeping. */
export function leftovers(s: NodeSnapshot): string[] {
  if (s.deleted) return [];
  const ours = s.taints.filter((t) => t.startsWith('skyhook.nvidia.com'));
  return [...(s.unschedulable ? ['cordoned'] : []), ...ours, ...s.cordonMarks];
}

/**
 * The controller-manager's `node.kubernetes.io/unschedulable` taint on a node that is no longer
 * cordoned: it mirrors the cordon and the controller-manager (not the operator) removes it, so it
 * is reported apart; after API server restarts it was seen to lag (README, Chaos).
 */
export const MIRRORED_CORDON_TAINT = 'node.kubernetes.io/unschedulable:NoSchedule';
export const mirroredTaintLeft = (s: NodeSnapshot): boolean =>
  !s.deleted && !s.unschedulable && s.taints.includes(MIRRORED_CORDON_TAINT);

/**
 * How often each of `nodes` rebooted, as the API server saw it: the changes of its bootID in the
 * recording. Not the simulated host's interrupt records: a reboot pod deleted after its reboot comes
 * back and is recorded again without rebooting (the host's marker), and an interrupt whose status
 * write failed (an API server restart) rebooted without a record of its own.
 */
export function rebootsOf(record: Pick<ClusterRecord, 'history'>, nodes: readonly string[]): number[] {
  const bootIds = new Map<string, string>();
  const reboots = new Map<string, number>();
  for (const { node, bootId } of record.history) {
    if (bootId === undefined) continue;
    const before = bootIds.get(node);
    if (before !== undefined && before !== bootId) reboots.set(node, (reboots.get(node) ?? 0) + 1);
    bootIds.set(node, bootId);
  }
  return nodes.map((node) => reboots.get(node) ?? 0);
}

/** A change the operator makes (state, status, cordon), as opposed to reboots or heartbeats. */
const operatorFields = (s: NodeSnapshot): string =>
  JSON.stringify([s.nodeState, s.status, s.unschedulable, s.cordonMarks]);

/** When the operator acted after `after`: a stage started, or a node's state or cordon changed (on `node` only, if given). */
export function firstActionAfter(record: ClusterRecord, after: number, node?: string): number | undefined {
  const starts = record
    .stageStarts()
    .filter((s) => s.at > after && (node === undefined || s.node === node))
    .map((s) => s.at);
  const previous = new Map<string, string>();
  const changes: number[] = [];
  for (const snapshot of record.history) {
    const fields = operatorFields(snapshot);
    const before = previous.get(snapshot.node);
    previous.set(snapshot.node, fields);
    if (
      snapshot.at > after &&
      before !== undefined &&
      before !== fields &&
      (node === undefined || snapshot.node === node)
    )
      changes.push(snapshot.at);
  }
  const all = [...starts, ...changes];
  return all.length ? Math.min(...all) : undefined;
}

export function judge(record: ClusterRecord, faults: Fault[], budget: number): Verdict {
  const violations: string[] = [];
  const byKey = new Map<string, StageStart[]>();
  for (const start of record.stageStarts()) byKey.set(stageKey(start), [...(byKey.get(stageKey(start)) ?? []), start]);
  const jobsByUid = record.jobs.jobs;
  const stagesRunTwice: string[] = [];
  const unexplainedStarts: string[] = [];
  const rerunsAfterDeletion: string[] = [];
  for (const [key, starts] of byKey) {
    const jobs = starts.filter((s) => s.kind === 'Job');
    // A Job after a succeeded one re-runs a finished stage, whatever caused it.
    if (jobs.slice(0, -1).some((j) => jobsByUid.get(j.uid)?.succeeded)) stagesRunTwice.push(key);
    const destroyedBy = faults.filter((f) => f.interrupted === key);
    const allowed = (kind: StageStart['kind']): number =>
      1 + destroyedBy.filter((f) => f.restarts?.includes(kind)).length;
    const nodeOps = starts.length - jobs.length;
    if (jobs.length > allowed('Job') || nodeOps > allowed('NodeOp'))
      unexplainedStarts.push(`${key} (${nodeOps} NodeOps, ${jobs.length} Jobs)`);
    else if (destroyedBy.length > 0 && jobs.length > 1) rerunsAfterDeletion.push(key);
  }
  // How each suspicious stage's starts went, relative to its first: kind, when, and when its Job succeeded.
  const timeline = (key: string): string => {
    const starts = byKey.get(key) ?? [];
    const t0 = starts[0]?.at ?? 0;
    const hits = faults
      .filter((f) => f.node !== undefined && f.node === starts[0]?.node)
      .map((f) => ` ${f.kind}@+${f.at - t0}`);
    return `${key}: ${starts.map((s) => `${s.kind}@+${s.at - t0}${jobsByUid.get(s.uid)?.succeeded ? ` ok@+${(jobsByUid.get(s.uid)?.doneAt ?? NaN) - t0}` : ''}`).join(' ')}${hits.join('')}`;
  };
  if (stagesRunTwice.length) violations.push(`completed stages ran again: ${stagesRunTwice.map(timeline).join('; ')}`);
  if (unexplainedStarts.length)
    violations.push(`stages started more often than the faults explain: ${unexplainedStarts.join(', ')}`);
  const maxDisrupted = record.maxDisrupted();
  if (maxDisrupted > budget)
    violations.push(
      `${maxDisrupted} nodes disrupted at once, budget ${budget}: ${record.mostDisrupted().nodes.join(' ')}`,
    );
  const left = [...record.latest().values()].flatMap((s) => leftovers(s).map((what) => `${s.node}: ${what}`));
  if (left.length) violations.push(`left behind: ${left.join(', ')}`);
  const recoveries = faults.map((f) => {
    const at = f.recoveredAt ?? firstActionAfter(record, f.from ?? f.endedAt, f.node);
    if (at === undefined)
      violations.push(`no operator action after the ${f.kind} fault${f.node ? ` on ${f.node}` : ''}`);
    return { kind: f.kind, ms: (at ?? NaN) - f.endedAt };
  });
  return {
    stageStarts: record.stageStarts().length,
    stagesRunTwice,
    unexplainedStarts,
    rerunsAfterDeletion,
    maxDisrupted,
    budget,
    leftCordonedOrTainted: left,
    mirroredTaintLeft: [...record.latest().values()].filter(mirroredTaintLeft).map((s) => s.node),
    recoveryMs: summarize(recoveries.map((r) => r.ms).filter(Number.isFinite)),
    recoveries,
    violations,
  };
}
