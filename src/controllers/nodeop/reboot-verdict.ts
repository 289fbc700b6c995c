/**
 * What the NodeOp controller hands the pure judgement of a Job the node's own reboot may have cut
 * off (lost-in-reboot.ts), read from its caches, and the node's status while the reboot pod has not
 * yet spoken.
 */
import type { NodeOpNodeStatus } from '../../api/nodeop.js';
import { rebootPodName } from '../../templates/object-names.js';
import type { NodeOpContext, NodeOpView } from './context.js';
import { type FailedJobInput, waitingMessage } from './lost-in-reboot.js';
import { type NodeStep, runningStatus } from './node-status.js';

export function failedJobInput(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
  now: number,
): FailedJobInput {
  // The waiting message is written once, so lastUpdated is when the wait began: the deadline holds still.
  const waitingSince = status.lastUpdated ? Date.parse(status.lastUpdated) : now;
  return {
    rebootsNode: op.plan?.rebootsNode ?? false,
    rebootPod: ctx.caches.pods.get(rebootPodName(status.jobName ?? ''), op.namespace),
    bootAtStart: status.bootID,
    node: ctx.caches.nodes.get(node),
    now,
    deadline: waitingSince + ctx.settings.rebootTimeoutMs,
  };
}

/** Running, looked at again soon: neither failed nor retried until the reboot pod says how the Job ended. */
export function waitForRebootPod(
  status: NodeOpNodeStatus,
  jobName: string,
  progress: { restarts: number },
  now: number,
): NodeStep {
  return {
    status: runningStatus(status, waitingMessage(jobName), progress.restarts, now),
    recheckAt: now + 2000,
    recheckReason: "the reboot pod's verdict on a Job lost in the reboot",
  };
}
