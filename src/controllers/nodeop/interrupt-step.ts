/**
 * A node whose Job succeeded and whose interrupt is pending (node-steps.ts hands it here): a reboot
 * is done when the node reports another bootID and is Ready again, any other interrupt when the
 * reboot pod succeeded; either fails the node when it does not happen within the reboot timeout.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { NODEOP_EVENT_REASONS as REASONS } from '../../api/names.js';
import type { NodeOpNodeStatus } from '../../api/nodeop.js';
import { describeFailedContainer } from '../../jobs/job-progress.js';
import { rebootPodName } from '../../templates/object-names.js';
import { ensureRebootPod, notify, type NodeOpContext, type NodeOpView } from './context.js';
import { failNode, finish } from './node-end.js';
import { bootIdOf, isNodeReady, type NodeStep, rebootObserved, updated } from './node-status.js';

/** Completed, interrupt pending: a reboot is done when the bootID changed and the node is Ready; other interrupts when the pod succeeded. */
export async function followInterrupt(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
): Promise<NodeStep> {
  const now = ctx.clock.now();
  const jobName = status.jobName ?? '';
  const plan = op.plan;
  if (!plan) return { status: updated(status, { rebootStatus: 'not-requested' }, now) };
  const pod = ctx.caches.pods.get(rebootPodName(jobName), op.namespace);
  const nodeObject = ctx.caches.nodes.get(node);
  const complete = async (message: string): Promise<NodeStep> => {
    notify(ctx, op, node, 'Normal', REASONS.rebootCompleted, message);
    const done = updated(status, { rebootStatus: 'completed', message }, now);
    await finish(ctx, op, node, done);
    return { status: done };
  };

  if (plan.rebootsNode) {
    if (rebootObserved(status, nodeObject)) {
      return complete(
        `Job ${jobName} and reboot completed successfully (bootID ${status.bootID ?? ''} → ${bootIdOf(nodeObject) ?? ''})`,
      );
    }
  } else if (pod?.status?.phase === 'Succeeded') {
    return complete(`Job ${jobName} and interrupt completed successfully`);
  } else if (pod && (pod.status?.phase === 'Failed' || hasFailedRun(pod))) {
    return failNode(
      ctx,
      op,
      node,
      status,
      `the interrupt after Job ${jobName} failed: ${describeFailedContainer(pod) ?? 'reboot pod failed'}`,
    );
  }

  const waitingSince = status.lastUpdated ? Date.parse(status.lastUpdated) : now;
  const deadline = waitingSince + ctx.settings.rebootTimeoutMs;
  if (now >= deadline) {
    const seen = plan.rebootsNode
      ? `bootID still ${bootIdOf(nodeObject) ?? 'unknown'}, node ${isNodeReady(nodeObject) ? 'Ready' : 'not Ready'}`
      : `reboot pod ${pod?.status?.phase ?? 'missing'}`;
    return failNode(
      ctx,
      op,
      node,
      status,
      `the interrupt after Job ${jobName} did not complete within ${Math.round(ctx.settings.rebootTimeoutMs / 1000)}s (${seen}); check the reboot pod's log`,
    );
  }
  // A reboot pod deleted meanwhile comes back; its marker on the host keeps it from interrupting twice.
  await ensureRebootPod(ctx, op, node, jobName);
  return { status, recheckAt: deadline, recheckReason: 'the interrupt times out then' };
}

function hasFailedRun(pod: V1Pod): boolean {
  return (pod.status?.containerStatuses ?? []).some(
    (s) => (s.state?.terminated?.exitCode ?? 0) !== 0 || (s.lastState?.terminated?.exitCode ?? 0) !== 0,
  );
}
