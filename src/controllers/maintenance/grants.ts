/**
 * Granting slots from the queue, in arrival order, while slots are free: a reboot request asks the
 * reboot blockers first, and every grant asks the disruption arbiter (the budget shared with Skyhook
 * interrupts and NodeOps) synchronously right before the grant and the cordon that follow it. A
 * request that cannot go keeps its place and gets the reason (the status's queue shows it; an Event
 * on the node marks when a wait for a new reason starts).
 */
import type { MaintenancePolicy, QueuedRequest } from '../../api/maintenance-policy.js';
import type { MaintenanceGrant } from '../../api/maintenance-protocol.js';
import { holderName, notify, type MaintenanceContext } from './context.js';
import type { QueueEntry, SlotPlan } from './slots.js';

export interface GrantOutcome {
  /** Nodes granted in this pass (the caller advances them at once). */
  granted: string[];
  /** Every request still waiting, with its reason. */
  waiting: QueuedRequest[];
  /** A blocker was asked and held a request: look again after the recheck interval. */
  recheckBlockers: boolean;
  /** The earliest next opening of a closed budget window a request waits for (ms since the epoch). */
  nextWindowOpen?: number;
}

const queued = (entry: QueueEntry, reason: string, message: string): QueuedRequest => ({
  node: entry.node,
  protocol: entry.protocol,
  requestedAt: entry.requestedAt,
  reason,
  message,
});

/** Why a free slot cannot go to `entry` now (blockers, then the arbiter), or undefined: grant it. */
async function holdOf(
  ctx: MaintenanceContext,
  policy: MaintenancePolicy,
  entry: QueueEntry,
): Promise<{ reason: string; message: string; blocker?: true; nextOpen?: number } | undefined> {
  const name = policy.metadata.name ?? '';
  if (entry.protocol === 'reboot') {
    const blockers = await ctx.rebootBlockers(
      { core: ctx.clients.core, logger: ctx.logger, signal: ctx.signal },
      { name, spec: policy.spec },
      entry.node,
    );
    if (blockers.blocked) return { reason: blockers.reason, message: blockers.message, blocker: true };
  }
  const decision = ctx.arbiter.tryAcquire(entry.node, holderName(name));
  if (!decision.granted)
    // Outside a budget's maintenance windows the request waits with that reason and the next opening.
    return decision.code
      ? {
          reason: decision.code,
          message: decision.reason,
          ...(decision.nextOpen ? { nextOpen: decision.nextOpen } : {}),
        }
      : { reason: 'ClusterBudget', message: `${decision.budget}: ${decision.reason}` };
  return undefined;
}

export async function grantSlots(
  ctx: MaintenanceContext,
  policy: MaintenancePolicy,
  plan: SlotPlan,
  maxConcurrent: number,
  holders: readonly string[],
): Promise<GrantOutcome> {
  const name = policy.metadata.name ?? '';
  const outcome: GrantOutcome = { granted: [], waiting: [], recheckBlockers: false };
  let free = plan.freeSlots;
  for (const entry of plan.queue) {
    if (entry.held) {
      outcome.waiting.push(queued(entry, entry.held.reason, entry.held.message));
      continue;
    }
    if (free <= 0) {
      const all = [...holders, ...outcome.granted];
      outcome.waiting.push(
        queued(
          entry,
          'MaxConcurrent',
          `all ${maxConcurrent} slots are held (${all.join(', ')}); waiting in arrival order`,
        ),
      );
      continue;
    }
    const hold = await holdOf(ctx, policy, entry);
    if (hold) {
      if (hold.blocker) outcome.recheckBlockers = true;
      if (hold.nextOpen !== undefined)
        outcome.nextWindowOpen = Math.min(outcome.nextWindowOpen ?? Number.POSITIVE_INFINITY, hold.nextOpen);
      outcome.waiting.push(queued(entry, hold.reason, hold.message));
      continue;
    }
    const grant: MaintenanceGrant = {
      policy: name,
      requestedAt: entry.requestedAt,
      grantedAt: new Date(ctx.clock.now()).toISOString(),
      phase: 'granted',
    };
    await ctx.leases.setGrant(entry.node, grant);
    notify(ctx, policy, entry.node, 'Normal', 'MaintenanceGranted', `${entry.protocol} slot granted`);
    outcome.granted.push(entry.node);
    free--;
  }
  return outcome;
}
