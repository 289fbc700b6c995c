/**
 * reconcile(MaintenancePolicy name), level-triggered from the caches (plus this process's own Lease
 * writes): plan the slots (slots.ts), release what ended, advance each holder (cordon, drain, tell
 * the daemon), grant free slots in arrival order, then write the status (paced) and the metrics. A
 * deleted policy releases every slot it still holds. Every decision reads the cluster, so a restarted
 * operator continues where the last one stopped.
 */
import { GROUP_VERSION, KINDS } from '../../api/names.js';
import type {
  MaintenanceCompletion,
  MaintenanceHolder,
  MaintenancePolicy,
  MaintenancePolicyStatus,
} from '../../api/maintenance-policy.js';
import { effectiveProtocols, lockTtlMs, maxConcurrentOf, policyForNode } from '../../api/maintenance-settings.js';
import { nextWindowOpen, windowError, windowsOpen } from '../../util/time-window.js';
import { cordonViewOf, maintenanceClaim, type NodeCordonView } from '../../jobs/cordon/claims.js';
import { nameOf } from '../../api/object-meta.js';
import type { ReconcileResult } from '../../kube/queue.js';
import { notify, policyObjects, type MaintenanceContext } from './context.js';
import { grantSlots } from './grants.js';
import { advanceHolder, releaseSlot } from './holder-steps.js';
import { PolicyStatusPacing, policyStatus } from './policy-status.js';
import { planSlots, type SlotPlan, type SlotPolicy } from './slots.js';

/** Whether a reboot may start now under the policy's rebootWindows, and when one next may. */
function rebootWindowAt(policy: MaintenancePolicy, now: number): SlotPolicy['rebootWindow'] {
  const windows = policy.spec.rebootWindows;
  if (windowsOpen(windows, new Date(now))) return { open: true };
  const next = nextWindowOpen(windows, new Date(now));
  return next ? { open: false, nextOpenMs: next.getTime() } : { open: false };
}

const rvOf = (rv: string | undefined): bigint => {
  try {
    return BigInt(rv ?? '0');
  } catch {
    return 0n;
  }
};

export class MaintenanceReconciler {
  private readonly ctx: MaintenanceContext;
  private readonly pacing = new PolicyStatusPacing();
  /** Requests whose drain failed, held back until a time (lost on restart: then simply tried again). */
  private readonly backoff = new Map<string, { untilMs: number; message: string }>();
  /**
   * The status this process last wrote per policy: a completion is added to recentCompletions once,
   * so the next pass must build on that write even before the cache shows it.
   */
  private readonly written = new Map<string, { rv: bigint; status: MaintenancePolicyStatus }>();
  /** The wait reason last reported per node, so an Event marks only the start of a new wait. */
  private readonly waitReasons = new Map<string, string>();

  constructor(ctx: MaintenanceContext) {
    this.ctx = ctx;
  }

  readonly reconcile = async (key: string): Promise<ReconcileResult> => {
    const policy = this.ctx.caches.policies.get(key);
    if (!policy || policy.metadata.deletionTimestamp) return this.releaseAll(key);
    return this.reconcilePolicy({ ...policy, apiVersion: GROUP_VERSION, kind: KINDS.maintenancePolicy.kind });
  };

  private slotPolicy(policy: MaintenancePolicy): SlotPolicy {
    const protocols = effectiveProtocols(policy.spec);
    const ttlMs = lockTtlMs(policy.spec);
    return {
      name: nameOf(policy),
      maxConcurrent: maxConcurrentOf(policy.spec),
      protocols: new Set([
        ...(protocols.maintenance ? ['maintenance' as const] : []),
        ...(protocols.reboot ? ['reboot' as const] : []),
      ]),
      ...(ttlMs !== undefined ? { ttlMs } : {}),
      rebootWindow: rebootWindowAt(policy, this.ctx.clock.now()),
    };
  }

  private plan(policy: MaintenancePolicy): { plan: SlotPlan; served: Set<string> } {
    const { caches, leases, clock } = this.ctx;
    const policies = caches.policies.list();
    const nodes = new Map<string, NodeCordonView>();
    const served = new Set<string>();
    for (const node of caches.nodes.list()) {
      const name = nameOf(node);
      nodes.set(name, cordonViewOf(node));
      if (policyForNode(policies, node.metadata?.labels ?? {})?.metadata.name === policy.metadata.name)
        served.add(name);
    }
    const plan = planSlots({
      policy: this.slotPolicy(policy),
      nodes,
      served,
      leases: leases.states(),
      claim: maintenanceClaim(nameOf(policy)),
      backoff: this.backoff,
      now: clock.now(),
    });
    return { plan, served };
  }

  /** Ends the slots the plan releases; resolves to the completions among them. */
  private async release(policy: MaintenancePolicy, plan: SlotPlan): Promise<MaintenanceCompletion[]> {
    const { ctx } = this;
    const name = nameOf(policy);
    const completed: MaintenanceCompletion[] = [];
    for (const release of plan.releases) {
      await releaseSlot(ctx, policy, release);
      const lease = release.lease;
      if (release.reason === 'Completed' && lease?.request && lease.done) {
        const { protocol, requestedAt } = lease.request;
        completed.push({ node: release.node, protocol, requestedAt, completedAt: lease.done.completedAt });
        ctx.metrics.completed(name, protocol, (Date.parse(lease.done.completedAt) - Date.parse(requestedAt)) / 1000);
        notify(ctx, policy, release.node, 'Normal', 'MaintenanceCompleted', release.message);
      } else {
        ctx.metrics.released(name, release.reason);
        const type = release.reason === 'Expired' ? 'Warning' : 'Normal';
        notify(ctx, policy, release.node, type, `Maintenance${release.reason}`, release.message);
      }
      if (release.reason === 'NodeDeleted') ctx.metrics.nodeGone(release.node);
    }
    return completed;
  }

  private async reconcilePolicy(policy: MaintenancePolicy): Promise<ReconcileResult> {
    const { ctx } = this;
    const name = nameOf(policy);
    const { plan, served } = this.plan(policy);
    const completed = await this.release(policy, plan);
    const holders: MaintenanceHolder[] = [];
    const advance = async (node: string, acquired: boolean): Promise<void> => {
      const state = ctx.leases.state(node);
      if (!state?.grant || !state.request) return;
      const holder = { node, lease: { ...state, grant: state.grant, request: state.request } };
      const progress = await advanceHolder(ctx, policy, holder, acquired);
      if (progress === 'released') {
        this.backoff.set(node, {
          untilMs: ctx.clock.now() + ctx.settings.drainFailureBackoffMs,
          message: 'drain failed',
        });
        return;
      }
      holders.push({
        node,
        protocol: state.request.protocol,
        phase: progress.phase,
        requestedAt: state.request.requestedAt,
        grantedAt: state.grant.grantedAt,
        ...(progress.message ? { message: progress.message.slice(0, 2048) } : {}),
      });
    };
    for (const holder of plan.holders) await advance(holder.node, false);
    const max = maxConcurrentOf(policy.spec);
    // A holder whose drain failed gave its slot back: the next pass may grant it.
    if (holders.length < plan.holders.length) ctx.enqueue(name);
    const grants = await grantSlots(
      ctx,
      policy,
      plan,
      max,
      holders.map((h) => h.node),
    );
    for (const node of grants.granted) await advance(node, true);
    this.noteWaits(
      policy,
      grants.waiting.map((w) => [w.node, w.reason, w.message ?? ''] as const),
    );
    const now = ctx.clock.now();
    const status = policyStatus({
      ...(policy.metadata.generation !== undefined ? { generation: policy.metadata.generation } : {}),
      matchedNodes: served.size,
      maxConcurrent: max,
      holders,
      queue: grants.waiting,
      completed,
      previous: this.statusOf(policy),
      keepCompletions: ctx.settings.recentCompletions,
      specErrors: (policy.spec.rebootWindows ?? []).flatMap((window, i) => {
        const error = windowError(window);
        return error ? [`rebootWindows[${i}]: ${error}`] : [];
      }),
      now,
    });
    const decision = this.pacing.decide(name, this.statusOf(policy), status, now);
    if (decision.write) {
      const written = await policyObjects(ctx).patchStatus(name, status);
      this.written.set(name, { rv: rvOf(written.metadata.resourceVersion), status });
      this.pacing.written(name, now);
    }
    ctx.metrics.report(
      name,
      holders.length,
      grants.waiting.map((w) => w.reason),
    );
    this.reportRebootRequests();
    const times = [
      ctx.settings.resyncMs,
      decision.write ? Number.POSITIVE_INFINITY : decision.retryInMs,
      plan.nextChangeMs === undefined ? Number.POSITIVE_INFINITY : Math.max(0, plan.nextChangeMs - now) + 10,
      grants.recheckBlockers ? ctx.settings.blockerRecheckMs : Number.POSITIVE_INFINITY,
      grants.nextWindowOpen === undefined ? Number.POSITIVE_INFINITY : Math.max(0, grants.nextWindowOpen - now) + 10,
    ];
    return { requeueAfterMs: Math.min(...times) };
  }

  /** The policy's status: the cached one, or this process's newer write. */
  private statusOf(policy: MaintenancePolicy): MaintenancePolicyStatus | undefined {
    const mine = this.written.get(nameOf(policy));
    if (!mine) return policy.status;
    if (rvOf(policy.metadata.resourceVersion) >= mine.rv) {
      this.written.delete(nameOf(policy));
      return policy.status;
    }
    return mine.status;
  }

  /** An Event when a request starts waiting for a new reason; forget nodes no longer waiting. */
  private noteWaits(policy: MaintenancePolicy, waits: readonly (readonly [string, string, string])[]): void {
    const waiting = new Set<string>();
    for (const [node, reason, message] of waits) {
      waiting.add(node);
      if (this.waitReasons.get(node) === reason) continue;
      this.waitReasons.set(node, reason);
      notify(this.ctx, policy, node, 'Normal', 'MaintenanceWaiting', `${reason}: ${message}`);
    }
    for (const node of this.waitReasons.keys()) if (!waiting.has(node)) this.waitReasons.delete(node);
  }

  /** kured_reboot_required's equivalent: 1 for every node with an open reboot request. */
  private reportRebootRequests(): void {
    const states = this.ctx.leases.states();
    const asking = new Set(
      states
        .filter((s) => s.request?.protocol === 'reboot' && s.done?.requestedAt !== s.request.requestedAt)
        .map((s) => s.node),
    );
    this.ctx.metrics.rebootRequests(
      asking,
      states.map((s) => s.node),
    );
  }

  /** A deleted policy: every slot it still holds is released (cordon claims lifted, grants removed). */
  private async releaseAll(name: string): Promise<ReconcileResult> {
    const { ctx } = this;
    const stub: MaintenancePolicy = {
      apiVersion: GROUP_VERSION,
      kind: KINDS.maintenancePolicy.kind,
      metadata: { name },
      spec: {},
    };
    const claim = maintenanceClaim(name);
    const granted = new Set(
      ctx.leases
        .states()
        .filter((s) => s.grant?.policy === name)
        .map((s) => s.node),
    );
    for (const node of ctx.caches.nodes.list()) {
      if (Object.hasOwn(node.metadata?.annotations ?? {}, claim)) granted.add(nameOf(node));
    }
    for (const node of granted) {
      const lease = ctx.leases.state(node);
      await releaseSlot(ctx, stub, {
        node,
        reason: 'Withdrawn',
        message: `policy ${name} was deleted`,
        nodeExists: ctx.caches.nodes.get(node) !== undefined,
        ...(lease ? { lease } : {}),
      });
    }
    this.pacing.forget(name);
    this.written.delete(name);
    ctx.metrics.forget(name);
    return undefined;
  }
}
