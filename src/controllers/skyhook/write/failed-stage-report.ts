/**
 * When a stage gives up (its Job failed), a Warning Event on the SCR says which container failed,
 * how, and the last lines of its log, so `kubectl describe skyhook` explains the failure without a
 * hunt for the pod (which goes with its Job's TTL, or earlier when the stage is retried). The log
 * is best effort: without it (pods gone, logs unreadable) the container's exit code and terminated
 * message still say what happened.
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { KUBERNETES_NAMES } from '../../../api/names.js';
import type { NodeOp } from '../../../api/nodeop.js';
import { failedTermination, STUCK_MARK } from '../../../jobs/job-progress.js';
import { errorMessage } from '../../../kube/client.js';
import { nameOf, namespaceOf } from '../../../api/object-meta.js';

export const STAGE_FAILED_REASON = 'StageFailed';
/** Lines of the failed container's log asked for; fewer make it into the Event if they are long. */
export const LOG_TAIL_LINES = 10;
/** Longer Event messages are hard to read in `kubectl describe`; the end of the log is what matters. */
export const MAX_EVENT_MESSAGE = 1024;

export interface FailedContainer {
  pod: string;
  container: string;
  exitCode: number;
  reason?: string;
  message?: string;
}

export interface FailedStage {
  package: string;
  version: string;
  stage: string;
  node: string;
  /** The NodeOp's last word on the node (Job condition, deadline…), used when no container is found. */
  summary?: string;
  container?: FailedContainer;
  log?: string;
}

/**
 * One line: what failed and the log's last lines joined with ` | ` (a multi-line message breaks the
 * Events table of `kubectl describe`). Over MAX_EVENT_MESSAGE the oldest log lines are dropped.
 */
export function failedStageMessage(failed: FailedStage): string {
  const head = `Package [${failed.package}:${failed.version}] stage [${failed.stage}] failed on node [${failed.node}]`;
  const c = failed.container;
  const how = c
    ? `container ${c.container} exited with code ${c.exitCode}${c.reason || c.message ? ` (${[c.reason, c.message].filter(Boolean).join(': ')})` : ''}`
    : (failed.summary ?? 'no failed container found');
  const text = `${head}: ${how}`;
  const lines = (failed.log ?? '')
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.length > 0)
    .slice(-LOG_TAIL_LINES);
  if (lines.length === 0) return truncateEnd(text, MAX_EVENT_MESSAGE);
  const prefix = `${text}; log tail: `;
  const room = MAX_EVENT_MESSAGE - prefix.length;
  if (room < 40) return truncateEnd(text, MAX_EVENT_MESSAGE);
  let tail = lines.join(' | ');
  if (tail.length > room) tail = `…${tail.slice(tail.length - room + 1)}`;
  return `${prefix}${tail}`;
}

function truncateEnd(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The first container of the most recent failed pod that exited non-zero. */
export function failedContainerOf(pods: V1Pod[]): FailedContainer | undefined {
  const time = (pod: V1Pod): number => new Date(pod.metadata?.creationTimestamp ?? 0).getTime();
  const newestFirst = [...pods].sort((a, b) => time(b) - time(a));
  for (const pod of newestFirst) {
    const failed = failedTermination(pod);
    if (!failed) continue;
    const { reason, message, exitCode } = failed.terminated;
    return {
      pod: nameOf(pod),
      container: failed.container,
      exitCode,
      ...(reason ? { reason } : {}),
      ...(message ? { message: message.trim() } : {}),
    };
  }
  return undefined;
}

/** Reads what the failed stage left (its Job's pods and the failed container's log); never throws. */
export async function describeFailedStage(core: CoreV1Api, nodeOp: NodeOp, logger: Logger): Promise<FailedStage> {
  const stage = nodeOp.spec.skyhookStage;
  const node = nodeOp.spec.targetNodes?.[0] ?? '';
  const namespace = namespaceOf(nodeOp);
  const nodeStatus = nodeOp.status?.nodeStatuses?.[node];
  const failed: FailedStage = {
    package: stage?.package.name ?? '',
    version: stage?.package.version ?? '',
    stage: stage?.stage ?? '',
    node,
    ...(nodeStatus?.message ? { summary: nodeStatus.message } : {}),
  };
  // A stuck Job was ended by the NodeOp controller: its killed pods would hide why (e.g. an image pull).
  if (!nodeStatus?.jobName || nodeStatus.message?.includes(STUCK_MARK)) return failed;
  try {
    const pods = await core.listNamespacedPod({
      namespace,
      labelSelector: `${KUBERNETES_NAMES.jobNameLabel}=${nodeStatus.jobName}`,
    });
    const container = failedContainerOf(pods.items);
    if (!container) return failed;
    failed.container = container;
    failed.log = await core.readNamespacedPodLog({
      name: container.pod,
      namespace,
      container: container.container,
      tailLines: LOG_TAIL_LINES,
      limitBytes: 16_384,
    });
  } catch (e) {
    logger.debug(
      { nodeOp: nodeOp.metadata.name, error: errorMessage(e) },
      "the failed stage's log could not be read; the Event goes without it",
    );
  }
  return failed;
}
