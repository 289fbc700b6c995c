/**
 * Upstream Skyhook's Prometheus gauges (reference/skyhook.md §9), same names and labels, so its
 * dashboards and alerts work unchanged. Each report resets one SCR's series and sets them again;
 * a deleted SCR's series are removed. Ours besides: the nodes held per wait reason (the
 * `waiting_<scr>` annotations) and since when the longest of them has waited, as a timestamp so
 * that an alert on `time() - …` keeps counting while nothing happens and nothing is reconciled;
 * and each node's wait for non-interruptible pods (non-interrupt-wait-metrics.ts).
 */
import { Gauge, type Registry } from 'prom-client';
import { SKYHOOK_STATUSES, type Skyhook, type SkyhookStatus } from '../../api/skyhook.js';
import { PACKAGE_STAGES, PACKAGE_STATES } from '../../api/skyhook-status.js';
import type { DeploymentPolicy } from '../../api/deployment-policy.js';
import { DEFAULT_COMPARTMENT } from '../../api/names.js';
import { strategyParams } from './plan/compartments.js';
import { nameOf } from '../../api/object-meta.js';
import { NonInterruptWaitMetrics } from './non-interrupt-wait-metrics.js';
import { RequeueMetrics } from './requeue-reasons.js';
import { ReconcilePhaseMetrics } from './reconcile-phases.js';

/** Upstream's policy_name label of an SCR rolled out by its interruptionBudget. */
const LEGACY_POLICY = 'legacy';

/** The compartment's strategy label: the policy's (`none` when it sets none), `fixed` for the legacy budget. */
function strategyOf(policy: DeploymentPolicy | undefined, compartment: string): string {
  if (policy === undefined) return 'fixed';
  const strategy =
    compartment === DEFAULT_COMPARTMENT
      ? policy.spec.default.strategy
      : policy.spec.compartments?.find((c) => c.name === compartment)?.strategy;
  return strategyParams(strategy)?.kind ?? 'none';
}

const ROLLOUT = ['skyhook_name', 'policy_name', 'compartment_name', 'strategy'] as const;
type RolloutLabel = (typeof ROLLOUT)[number];

export class SkyhookMetrics {
  private readonly status: Gauge<'skyhook_name' | 'status'>;
  private readonly nodeStatusCount: Gauge<'skyhook_name' | 'status'>;
  private readonly nodeTargetCount: Gauge<'skyhook_name'>;
  private readonly packageState: Gauge<'skyhook_name' | 'package_name' | 'package_version' | 'state'>;
  private readonly packageStage: Gauge<'skyhook_name' | 'package_name' | 'package_version' | 'stage'>;
  private readonly packageRestarts: Gauge<'skyhook_name' | 'package_name' | 'package_version'>;
  private readonly rollout: Record<string, Gauge<RolloutLabel>>;
  private readonly waiting: Gauge<'skyhook_name' | 'reason'>;
  private readonly waitingSince: Gauge<'skyhook_name' | 'reason'>;
  /** When this process first saw each node of an SCR held for its current reason (SCR → node → wait). */
  private readonly waitStarts = new Map<string, Map<string, { reason: string; sinceMs: number }>>();
  /** Each node's wait for non-interruptible pods, from its persisted start. */
  readonly podWaits: NonInterruptWaitMetrics;
  /** Why reconciles asked to be looked at again (requeue-reasons.ts). */
  readonly requeues: RequeueMetrics;
  /** Where each reconcile's time went (reconcile-phases.ts). */
  readonly phases: ReconcilePhaseMetrics;
  /** The series set per SCR, so they can be removed (prom-client removes exact label sets only). */
  private readonly series = new Map<string, { gauge: Gauge<string>; labels: Record<string, string> }[]>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.podWaits = new NonInterruptWaitMetrics(registry);
    this.requeues = new RequeueMetrics(registry);
    this.phases = new ReconcilePhaseMetrics(registry);
    this.status = new Gauge({
      name: 'skyhook_status',
      help: "1 for the Skyhook's current status, 0 for the others",
      labelNames: ['skyhook_name', 'status'],
      registers,
    });
    this.nodeStatusCount = new Gauge({
      name: 'skyhook_node_status_count',
      help: 'Nodes of the Skyhook per node status',
      labelNames: ['skyhook_name', 'status'],
      registers,
    });
    this.nodeTargetCount = new Gauge({
      name: 'skyhook_node_target_count',
      help: 'Nodes the Skyhook targets',
      labelNames: ['skyhook_name'],
      registers,
    });
    this.packageState = new Gauge({
      name: 'skyhook_package_state_count',
      help: 'Nodes per package state',
      labelNames: ['skyhook_name', 'package_name', 'package_version', 'state'],
      registers,
    });
    this.packageStage = new Gauge({
      name: 'skyhook_package_stage_count',
      help: 'Nodes per package stage',
      labelNames: ['skyhook_name', 'package_name', 'package_version', 'stage'],
      registers,
    });
    this.packageRestarts = new Gauge({
      name: 'skyhook_package_restarts_count',
      help: 'Restarts of the package summed over nodes',
      labelNames: ['skyhook_name', 'package_name', 'package_version'],
      registers,
    });
    const rollout = (name: string, help: string): Gauge<RolloutLabel> =>
      new Gauge({ name, help, labelNames: [...ROLLOUT], registers });
    this.rollout = {
      matched: rollout('skyhook_rollout_matched_nodes', 'Nodes in the compartment'),
      ceiling: rollout('skyhook_rollout_ceiling', 'Nodes of the compartment allowed in progress at once'),
      inProgress: rollout('skyhook_rollout_in_progress', 'Nodes of the compartment in progress'),
      completed: rollout('skyhook_rollout_completed', 'Nodes of the compartment complete'),
      percent: rollout('skyhook_rollout_progress_percent', 'Complete nodes of the compartment, percent'),
      batch: rollout('skyhook_rollout_current_batch', 'Current batch of the compartment'),
      failures: rollout('skyhook_rollout_consecutive_failures', 'Consecutive failed batches'),
      shouldStop: rollout('skyhook_rollout_should_stop', '1 when the rollout stopped on failures'),
    };
    this.waiting = new Gauge({
      name: 'skyhook_node_waiting_count',
      help: 'Nodes of the Skyhook held, per wait reason',
      labelNames: ['skyhook_name', 'reason'],
      registers,
    });
    this.waitingSince = new Gauge({
      name: 'skyhook_node_waiting_since_timestamp_seconds',
      help: 'Unix time since which the longest-held node of the Skyhook waits for the reason (as first seen by this operator process)',
      labelNames: ['skyhook_name', 'reason'],
      registers,
    });
  }

  /**
   * `policy`: the DeploymentPolicy the SCR names, when it exists (else the legacy budget's labels);
   * `waits`: the wait reason of each held node (node name → reason); `nowMs`: the time of this report.
   */
  report(
    skyhook: Skyhook,
    status: SkyhookStatus,
    policy?: DeploymentPolicy,
    waits: ReadonlyMap<string, string> = new Map(),
    nowMs = Date.now(),
    /** Every node's package states when the status lists fewer (status-size.ts); else the status's. */
    nodeState: SkyhookStatus['nodeState'] = status.nodeState,
  ): void {
    const name = nameOf(skyhook);
    this.remove(name);
    const tracked: { gauge: Gauge<string>; labels: Record<string, string> }[] = [];
    this.series.set(name, tracked);
    const set = <L extends string>(gauge: Gauge<L>, labels: Record<L, string>, value: number): void => {
      gauge.set(labels, value);
      tracked.push({ gauge: gauge as unknown as Gauge<string>, labels });
    };
    for (const value of SKYHOOK_STATUSES)
      set(this.status, { skyhook_name: name, status: value }, status.status === value ? 1 : 0);
    const nodeStatus = status.nodeStatus ?? {};
    const nodes = Object.keys(nodeStatus);
    set(this.nodeTargetCount, { skyhook_name: name }, nodes.length);
    // Every status, state and stage has its series, 0 when no node is in it (upstream's): a query or
    // alert on `{status="blocked"} == 0` finds 0, not nothing.
    const statusCounts = tally(Object.values(nodeStatus), (value) => value);
    for (const value of SKYHOOK_STATUSES)
      set(this.nodeStatusCount, { skyhook_name: name, status: value }, statusCounts.get(value) ?? 0);
    for (const { name: pkgName, version, states, stages, restarts } of packageTotals(nodeState ?? {}, skyhook)) {
      const pkg = { skyhook_name: name, package_name: pkgName, package_version: version };
      for (const state of PACKAGE_STATES) set(this.packageState, { ...pkg, state }, states.get(state) ?? 0);
      for (const stage of PACKAGE_STAGES) set(this.packageStage, { ...pkg, stage }, stages.get(stage) ?? 0);
      set(this.packageRestarts, pkg, restarts);
    }
    for (const [reason, { count, sinceMs }] of this.waitsByReason(name, waits, nowMs)) {
      set(this.waiting, { skyhook_name: name, reason }, count);
      set(this.waitingSince, { skyhook_name: name, reason }, sinceMs / 1000);
    }
    // One series set per compartment, from the status the planner wrote (legacy: `__default__`, policy "legacy", fixed).
    for (const [compartment, counts] of Object.entries(status.compartmentStatuses ?? {})) {
      const labels = {
        skyhook_name: name,
        policy_name: policy?.metadata.name ?? LEGACY_POLICY,
        compartment_name: compartment,
        strategy: strategyOf(policy, compartment),
      };
      const batch = counts.batchState;
      set(this.rollout['matched']!, labels, counts.matched);
      set(this.rollout['ceiling']!, labels, counts.ceiling);
      set(this.rollout['inProgress']!, labels, counts.inProgress);
      set(this.rollout['completed']!, labels, counts.completed);
      set(this.rollout['percent']!, labels, counts.progressPercent);
      set(this.rollout['batch']!, labels, batch?.currentBatch ?? 1);
      set(this.rollout['failures']!, labels, batch?.consecutiveFailures ?? 0);
      set(this.rollout['shouldStop']!, labels, batch?.shouldStop ? 1 : 0);
    }
  }

  /** Every series of the SCR (it was deleted, or is about to be reported afresh). */
  remove(name: string): void {
    for (const { gauge, labels } of this.series.get(name) ?? []) gauge.remove(labels);
    this.series.delete(name);
  }

  /** Forgets the SCR's wait start times too: it was deleted. */
  forget(name: string): void {
    this.remove(name);
    this.waitStarts.delete(name);
    this.podWaits.forget(name);
  }

  /** Held nodes per reason and the earliest start among them; a node keeps its start while its reason stays. */
  private waitsByReason(
    name: string,
    waits: ReadonlyMap<string, string>,
    nowMs: number,
  ): Map<string, { count: number; sinceMs: number }> {
    const before = this.waitStarts.get(name) ?? new Map<string, { reason: string; sinceMs: number }>();
    const starts = new Map<string, { reason: string; sinceMs: number }>();
    const byReason = new Map<string, { count: number; sinceMs: number }>();
    for (const [node, reason] of waits) {
      const previous = before.get(node);
      const sinceMs = previous?.reason === reason ? previous.sinceMs : nowMs;
      starts.set(node, { reason, sinceMs });
      const entry = byReason.get(reason);
      byReason.set(reason, { count: (entry?.count ?? 0) + 1, sinceMs: Math.min(entry?.sinceMs ?? sinceMs, sinceMs) });
    }
    this.waitStarts.set(name, starts);
    return byReason;
  }
}

/** How many of `items` share each key, in the order the keys first come. */
function tally<T>(items: Iterable<T>, keyOf: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const key = keyOf(item);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

interface PackageTotals {
  name: string;
  version: string;
  /** Nodes per state and per stage; restarts summed over the nodes. */
  states: Map<string, number>;
  stages: Map<string, number>;
  restarts: number;
}

/**
 * The package series' values summed over every node first: a series set once per reconcile instead
 * of incremented once per node (at 1000 nodes, 3000 increments and as many removals each
 * reconcile, 3 % of the operator's CPU in `rollout-1000`).
 */
function packageTotals(nodeState: NonNullable<SkyhookStatus['nodeState']>, skyhook: Skyhook): PackageTotals[] {
  const totals = new Map<string, PackageTotals>();
  // The spec's packages count from zero before any node has state for them.
  for (const [pkgName, { version }] of Object.entries(skyhook.spec.packages ?? {}))
    totals.set(`${pkgName}\u0000${version}`, {
      name: pkgName,
      version,
      states: new Map(),
      stages: new Map(),
      restarts: 0,
    });
  for (const entries of Object.values(nodeState)) {
    for (const entry of Object.values(entries)) {
      const key = `${entry.name}\u0000${entry.version}`;
      let total = totals.get(key);
      if (total === undefined) {
        total = { name: entry.name, version: entry.version, states: new Map(), stages: new Map(), restarts: 0 };
        totals.set(key, total);
      }
      const state = entry.state ?? 'unknown';
      total.states.set(state, (total.states.get(state) ?? 0) + 1);
      total.stages.set(entry.stage, (total.stages.get(entry.stage) ?? 0) + 1);
      total.restarts += entry.restarts ?? 0;
    }
  }
  return [...totals.values()];
}
