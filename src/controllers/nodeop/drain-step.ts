/**
 * The drain of one node before its Job: evictions run in the background (drain-tasks.ts) while each
 * reconcile polls them, so a long drain holds no worker. A failed drain fails the node, and the
 * cordon of ours goes, since the operation never ran there.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { NODEOP_EVENT_REASONS as REASONS, NODEOP_NAMES } from '../../api/names.js';
import type { DrainOptions, NodeOpNodeStatus } from '../../api/nodeop.js';
import { evictPods } from '../../jobs/drain.js';
import { notify, type NodeOpContext, type NodeOpView } from './context.js';
import { failNode, uncordonOurs } from './node-end.js';
import { type NodeStep, updated } from './node-status.js';
import { nameOf } from '../../api/object-meta.js';

/** Pods a drain leaves alone: every NodeOp's Job and reboot pods, and the operator itself. */
function isOperatorPod(ctx: NodeOpContext, pod: V1Pod): boolean {
  if (Object.hasOwn(pod.metadata?.labels ?? {}, NODEOP_NAMES.nodeOpLabel)) return true;
  return ctx.ownPod !== undefined && `${pod.metadata?.namespace ?? ''}/${nameOf(pod)}` === ctx.ownPod;
}

/** Drains `node` with `options`; resolves to the node's step while it waits or failed, undefined once drained. */
export async function drainStep(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
  options: DrainOptions,
  now: number,
): Promise<NodeStep | undefined> {
  const startedAtMs = status.startedAt ? Date.parse(status.startedAt) : now;
  const drainId = `${op.key}|${node}`;
  // The options' own exemptions (exemptNamespaces, exemptCordonTolerating) apply in planDrain.
  const exempt = (pod: V1Pod): boolean => isOperatorPod(ctx, pod);
  const result = ctx.drains.poll(
    drainId,
    (signal, report) =>
      evictPods(
        {
          core: ctx.clients.core,
          logger: ctx.logger,
          clock: ctx.clock,
          signal,
          exempt,
          // Reported in the node's message (`still there: <ns>/<pod> (<why>)`), which the Skyhook controller reads as drain blockers.
          onBlocked: (blocked) =>
            report(
              blocked.length > 0 ? `drain of node ${node} waiting; still there: ${blocked.join(', ')}` : undefined,
            ),
        },
        node,
        options,
        startedAtMs,
      ),
    () => ctx.enqueue(op.key),
  );
  if (!result)
    return { status: updated(status, { message: ctx.drains.progress(drainId) ?? `draining node ${node}` }, now) };
  if (result.outcome !== 'drained') {
    notify(ctx, op, node, 'Warning', REASONS.drainFailed, result.message);
    // The operation never ran on this node, so a cordon of ours is lifted whatever uncordonOnFailure says.
    if (await uncordonOurs(ctx, op, node))
      notify(ctx, op, node, 'Normal', REASONS.uncordoned, 'uncordoned after the failed drain');
    return failNode(ctx, op, node, status, result.message);
  }
  if (result.evicted.length > 0)
    notify(ctx, op, node, 'Normal', REASONS.drained, `evicted ${result.evicted.join(', ')}`);
  return undefined;
}
