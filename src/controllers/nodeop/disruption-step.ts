/**
 * The cluster budgets' gate of a NodeOp's node: before the node's work newly disrupts it (a cordon,
 * or a reboot without one) the shared arbiter must grant it, within every DisruptionBudget's count
 * and maintenance windows. A node refused stays Pending with the reason in its status entry
 * (`OutsideMaintenanceWindow: … next opens …`, or the full budget) and is asked again. A reboot
 * without a cordon is marked on the node (`rebooting-by`), so every budget counts it until the
 * NodeOp is done with the node (node-end.ts lifts the mark).
 */
import { NODEOP_EVENT_REASONS as REASONS } from '../../api/names.js';
import type { NodeOpNodeStatus } from '../../api/nodeop.js';
import { nodeOpClaim } from '../../jobs/cordon/claims.js';
import { markRebooting } from '../../jobs/cordon/reboot-mark.js';
import { claimCordon } from '../../jobs/cordon/write.js';
import { NODEOP_NAMES } from '../../api/names.js';
import { nameOf } from '../../api/object-meta.js';
import { notify, type NodeOpContext, type NodeOpView } from './context.js';
import { type NodeStep, updated } from './node-status.js';

/** How soon a node waiting for a cluster budget asks again (a node event may wake it sooner). */
const BUDGET_RECHECK_MS = 5_000;

/** The NodeOp as a holder of the cluster budgets: `nodeop/<namespace>/<name>`. */
export const nodeOpHolder = (op: NodeOpView): string => `nodeop/${op.namespace}/${nameOf(op.nodeOp)}`;

/** The NodeOp reboots its nodes without cordoning them first. */
export const rebootsUncordoned = (op: NodeOpView): boolean =>
  op.plan?.rebootsNode === true && op.nodeOp.spec.cordon !== true;

/** The node's work disrupts it: it is cordoned, or rebooted. */
export const disruptsNode = (op: NodeOpView): boolean => op.nodeOp.spec.cordon === true || rebootsUncordoned(op);

/**
 * Asks the arbiter and, granted, cordons the node (or marks the reboot). Resolves to the waiting step
 * when refused, or undefined: go on.
 */
export async function takeDisruption(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
  now: number,
): Promise<NodeStep | undefined> {
  const cordon = op.nodeOp.spec.cordon === true;
  // A reboot's mark reserves the slot until the cache shows it, even on a node someone else disrupts.
  const decision = ctx.arbiter.tryAcquire(node, nodeOpHolder(op), cordon ? undefined : NODEOP_NAMES.rebootingBy);
  if (!decision.granted) {
    const message = decision.code
      ? `waiting: ${decision.reason}`
      : `waiting for the cluster disruption budget: ${decision.reason}`;
    const recheckAt = Math.min(now + BUDGET_RECHECK_MS, decision.nextOpen ?? Number.POSITIVE_INFINITY);
    return {
      status: updated(status, { message }, now),
      recheckAt,
      recheckReason: decision.code ? 'waiting for a maintenance window' : 'waiting for the cluster disruption budget',
    };
  }
  if (!cordon) {
    await markRebooting(ctx.clients.core, node, op.owner);
    return undefined;
  }
  const { outcome } = await claimCordon(ctx.clients.core, node, nodeOpClaim(op.owner));
  if (outcome === 'cordoned') notify(ctx, op, node, 'Normal', REASONS.cordoned, 'cordoned');
  return undefined;
}
