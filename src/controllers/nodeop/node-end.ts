/**
 * How a node of a NodeOp ends: a failed node's entry and Event, the failed Job kept for the failure
 * TTL, and for terminal nodes the uncordon of our claim and the cancelled interrupt. Shared by the
 * steps of node-steps.ts and the drain of drain-step.ts.
 */
import type { V1Job } from '@kubernetes/client-node';
import { NODEOP_NAMES, NODEOP_EVENT_REASONS as REASONS } from '../../api/names.js';
import { unmarkRebooting } from '../../jobs/cordon/reboot-mark.js';
import type { NodeOpNodeStatus } from '../../api/nodeop.js';
import { cordonedBy, nodeOpClaim } from '../../jobs/cordon/claims.js';
import { releaseCordon } from '../../jobs/cordon/write.js';
import { MERGE_PATCH } from '../../kube/client.js';
import { rebootPodName } from '../../templates/object-names.js';
import { isNodeDone } from './aggregate.js';
import { notify, type NodeOpContext, type NodeOpView } from './context.js';
import { type NodeStep, updated } from './node-status.js';
import { nameOf } from '../../api/object-meta.js';
import { ignoreNotFound } from '../../kube/writes.js';

/** Lifts the NodeOp's cordon of `node` if its claim still holds it; true when the node was uncordoned. */
export async function uncordonOurs(ctx: NodeOpContext, op: NodeOpView, node: string): Promise<boolean> {
  return (await releaseCordon(ctx.clients.core, node, nodeOpClaim(op.owner))).uncordoned;
}

/**
 * A failed Job is kept for the longer failure TTL (Jobs are created with the success TTL).
 * `ttlSecondsAfterFinished` stays mutable after the Job finished (the TTL controller re-reads it);
 * done before the node's status moves on, so a restart in between repeats it.
 */
export async function keepFailedJob(
  ctx: NodeOpContext,
  op: NodeOpView,
  job: V1Job,
  extra: { activeDeadlineSeconds?: number } = {},
): Promise<void> {
  const ttl = ctx.settings.jobTtlFailedSeconds;
  if (job.spec?.ttlSecondsAfterFinished === ttl && extra.activeDeadlineSeconds === undefined) return;
  await ignoreNotFound(
    ctx.clients.batch.patchNamespacedJob(
      { name: nameOf(job), namespace: op.namespace, body: { spec: { ttlSecondsAfterFinished: ttl, ...extra } } },
      MERGE_PATCH,
    ),
  );
}

export async function failNode(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
  message: string,
  restarts?: number,
): Promise<NodeStep> {
  notify(ctx, op, node, 'Warning', REASONS.nodeFailed, message);
  const failed = updated(
    status,
    {
      phase: 'Failed',
      message,
      ...(restarts !== undefined ? { restarts } : {}),
      ...(op.plan ? { rebootStatus: 'cancelled' as const } : {}),
    },
    ctx.clock.now(),
  );
  await finish(ctx, op, node, failed);
  return { status: failed };
}

/** Terminal nodes: uncordon if we cordoned (after failure only when asked); a failed node's reboot pod goes. */
export async function finish(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
): Promise<void> {
  const spec = op.nodeOp.spec;
  const nodeObject = ctx.caches.nodes.get(node);
  const release = isNodeDone(status) || (status.phase === 'Failed' && spec.uncordonOnFailure === true);
  // The cache says whether the annotation is ours; only then is the node read and written.
  if (spec.cordon && release && nodeObject && cordonedBy(nodeObject) === op.owner) {
    if (await uncordonOurs(ctx, op, node)) notify(ctx, op, node, 'Normal', REASONS.uncordoned, 'uncordoned');
  }
  // A reboot's mark goes once the node is done with, failed or not: the node is back in service or ours no more.
  if (nodeObject?.metadata?.annotations?.[NODEOP_NAMES.rebootingBy] === op.owner)
    await unmarkRebooting(ctx.clients.core, node, op.owner);
  if (status.phase === 'Failed') await cancelInterrupt(ctx, op, node, status);
}

async function cancelInterrupt(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
): Promise<void> {
  const name = rebootPodName(status.jobName ?? '');
  if (!op.plan || !ctx.caches.pods.get(name, op.namespace)) return;
  const deleted = await ignoreNotFound(
    ctx.clients.core.deleteNamespacedPod({ name, namespace: op.namespace, gracePeriodSeconds: 0 }),
  );
  if (deleted) ctx.logger.info({ nodeOp: op.key, node, pod: name }, 'deleted the reboot pod of a failed node');
}
