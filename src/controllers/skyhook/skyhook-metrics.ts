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
import { type CompartmentStatus, PACKAGE_STAGES, PACKAGE_STATES } from '../../api/skyhook-status.js';
import type { DeploymentPolicy } from '../../api/deployment-policy.js';
import { DEFAULT_COMPARTMENT } from '../../api/names.js';
import { strategyParams } from './plan/compartments.js';
import { nameOf } from '../../api/object-meta.js';
import { NonInterruptWaitMetrics } from './non-interrupt-wait-metrics.js';
import { RequeueMetrics } from './requeue-reasons.js';
import { packageTotals, tally } from './package-metric-totals.js';
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
    this.reportRollout(skyhook, status, policy, set);
  }

  /**
   * One series set per compartment, from the status the planner wrote (legacy: `__default__`, policy
   * "legacy", fixed). Before the planner has written any, every compartment the SCR will have reports
   * 0 (batch 1), so a freshly created Skyhook has its rollout series from its first reconcile.
   */
  private reportRollout(
    skyhook: Skyhook,
    status: SkyhookStatus,
    policy: DeploymentPolicy | undefined,
    set: (gauge: Gauge<RolloutLabel>, labels: Record<RolloutLabel, string>, value: number) => void,
  ): void {
    const name = nameOf(skyhook);
    for (const [compartment, counts] of Object.entries(rolloutCompartments(skyhook, status, policy))) {
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

const NOTHING_YET: CompartmentStatus = { matched: 0, ceiling: 0, inProgress: 0, completed: 0, progressPercent: 0 };

/**
 * The compartments to report: the status's, and each one the SCR's rollout has that the status does
 * not list yet at 0 (the policy's compartments and its default; `__default__` alone without a policy).
 * An SCR naming a policy that does not exist (yet) has no compartments to report until it does.
 */
export function rolloutCompartments(
  skyhook: Skyhook,
  status: SkyhookStatus,
  policy: DeploymentPolicy | undefined,
): Record<string, CompartmentStatus> {
  const missingPolicy = skyhook.spec.deploymentPolicy !== undefined && policy === undefined;
  const expected = missingPolicy ? [] : [...(policy?.spec.compartments ?? []).map((c) => c.name), DEFAULT_COMPARTMENT];
  return { ...Object.fromEntries(expected.map((c) => [c, NOTHING_YET])), ...status.compartmentStatuses };
}
