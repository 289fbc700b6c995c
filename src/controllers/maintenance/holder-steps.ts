/**
 * What happens to a slot holder, one step per reconcile: cordon under the policy's shared claim (after
 * the disruption arbiter allows it), drain with the NodeOp drain (Eviction API, PDBs, timeout counted
 * from the grant), then tell the daemon (`grant.phase: drained`) and wait for its `done`. And the
 * release of a slot, whatever ended it: the claim goes (the node is uncordoned when no other claim
 * holds it), then the grant (a deleted node's Lease goes whole). Cordon before grant removal, so a
 * crash in between leaves a grant whose release is simply done again.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { HolderPhase, MaintenancePolicy } from '../../api/maintenance-policy.js';
import { effectiveDrainOptions } from '../../api/maintenance-settings.js';
import { NODEOP_NAMES } from '../../api/names.js';
import { nameOf } from '../../api/object-meta.js';
import { cordonViewOf, maintenanceClaim, sharedClaim } from '../../jobs/cordon/claims.js';
import { claimCordon, releaseCordon } from '../../jobs/cordon/write.js';
import { evictPods } from '../../jobs/drain.js';
import { ignoreNotFound } from '../../kube/writes.js';
import { holderName, notify, type MaintenanceContext } from './context.js';
import type { Holder, Release } from './slots.js';

export interface HolderProgress {
  phase: HolderPhase;
  message?: string;
}

const drainId = (policy: string, node: string): string => `${policy}|${node}`;

/** Pods a maintenance drain leaves alone: NodeOp Job and reboot pods, and the operator itself. */
function exemptPod(ctx: MaintenanceContext, pod: V1Pod): boolean {
  if (Object.hasOwn(pod.metadata?.labels ?? {}, NODEOP_NAMES.nodeOpLabel)) return true;
  return ctx.ownPod !== undefined && `${pod.metadata?.namespace ?? ''}/${nameOf(pod)}` === ctx.ownPod;
}

/**
 * Cordons the holder's node under the policy's claim unless the cache shows it there. `acquired`:
 * the arbiter granted this node to the policy in this pass (a fresh grant); otherwise (a grant made
 * before a restart) the arbiter is asked again, and a refusal holds the cordon with its reason.
 */
async function cordonHolder(
  ctx: MaintenanceContext,
  policy: MaintenancePolicy,
  node: string,
  acquired: boolean,
): Promise<HolderProgress | undefined> {
  const name = policy.metadata.name ?? '';
  const claim = maintenanceClaim(name);
  const cached = ctx.caches.nodes.get(node);
  const view = cached ? cordonViewOf(cached) : undefined;
  if (view?.unschedulable && Object.hasOwn(view.annotations, claim)) return undefined;
  if (!acquired) {
    const decision = ctx.arbiter.tryAcquire(node, holderName(name));
    if (!decision.granted)
      return {
        phase: 'Cordoning',
        message: decision.code ? decision.reason : `ClusterBudget: ${decision.budget}: ${decision.reason}`,
      };
  }
  const { outcome } = await claimCordon(ctx.clients.core, node, sharedClaim(claim));
  if (outcome === 'cordoned' || outcome === 'joined')
    notify(ctx, policy, node, 'Normal', 'Cordoned', `cordoned for maintenance (${outcome})`);
  return undefined;
}

/** Advances one holder; resolves to its phase for the status, or 'released' when a failed drain ended the slot. */
export async function advanceHolder(
  ctx: MaintenanceContext,
  policy: MaintenancePolicy,
  holder: Holder,
  acquired = false,
): Promise<HolderProgress | 'released'> {
  const { grant, request, progress } = holder.lease;
  const name = policy.metadata.name ?? '';
  if (grant.phase === 'drained')
    return {
      phase: request.protocol === 'reboot' ? 'Rebooting' : 'InProgress',
      ...(progress ? { message: progress } : {}),
    };
  const held = await cordonHolder(ctx, policy, holder.node, acquired);
  if (held) return held;
  const options = effectiveDrainOptions(policy.spec);
  if (options) {
    const id = drainId(name, holder.node);
    const result = ctx.drains.poll(
      id,
      (signal, report) =>
        evictPods(
          {
            core: ctx.clients.core,
            logger: ctx.logger,
            clock: ctx.clock,
            signal,
            exempt: (pod) => exemptPod(ctx, pod),
            onBlocked: (blocked) =>
              report(blocked.length > 0 ? `drain waiting; still there: ${blocked.join(', ')}` : undefined),
          },
          holder.node,
          options,
          Date.parse(grant.grantedAt),
        ),
      () => ctx.enqueue(name),
    );
    if (!result) return { phase: 'Draining', message: ctx.drains.progress(id) ?? `draining node ${holder.node}` };
    if (result.outcome !== 'drained') {
      notify(ctx, policy, holder.node, 'Warning', 'DrainFailed', result.message);
      await releaseSlot(ctx, policy, {
        node: holder.node,
        reason: 'Withdrawn',
        message: result.message,
        nodeExists: true,
        lease: holder.lease,
      });
      return 'released';
    }
    if (result.evicted.length > 0)
      notify(ctx, policy, holder.node, 'Normal', 'Drained', `evicted ${result.evicted.join(', ')}`);
  }
  await ctx.leases.setGrant(holder.node, { ...grant, phase: 'drained' });
  notify(
    ctx,
    policy,
    holder.node,
    'Normal',
    'MaintenanceStarted',
    `cordoned and drained; the node's ${request.protocol} may start`,
  );
  return { phase: request.protocol === 'reboot' ? 'Rebooting' : 'InProgress' };
}

/** Ends a slot: the cordon claim (uncordoning when it was the last), then the grant or the deleted node's Lease. */
export async function releaseSlot(ctx: MaintenanceContext, policy: MaintenancePolicy, release: Release): Promise<void> {
  const name = policy.metadata.name ?? '';
  ctx.drains.abort(drainId(name, release.node));
  if (release.nodeExists) {
    const released = await ignoreNotFound(
      releaseCordon(ctx.clients.core, release.node, sharedClaim(maintenanceClaim(name))),
    );
    if (released?.uncordoned) notify(ctx, policy, release.node, 'Normal', 'Uncordoned', release.message);
  }
  if (release.reason === 'NodeDeleted') await ctx.leases.deleteLease(release.node);
  else if (release.lease?.grant) await ignoreNotFound(ctx.leases.setGrant(release.node, null));
}
