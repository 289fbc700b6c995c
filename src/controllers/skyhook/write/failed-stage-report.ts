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
/** Lines of the failed container's log put in the Event; fewer if they are long. */
export const LOG_TAIL_LINES = 10;
/**
 * Lines read from the log: more than shown, so the agent's start-up banner (about 25 lines) can be
 * dropped and the Event still holds LOG_TAIL_LINES lines of the run itself when there are that many.
 */
export const LOG_LINES_READ = 100;
/** The agent's start-up banner (src/agent/banner.ts) ends with its history_file line and a rule. */
const BANNER_LAST_SETTING = 'history_file: ';
const BANNER_RULE = '-'.repeat(20);
/** The line after the banner's opening rule. */
const BANNER_SECOND_LINE = '-CLI CONFIGURATION--';
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
  // A message of several lines is the log's tail the kubelet saved (FallbackToLogsOnError): it is
  // shown as the log tail, not as part of the exit.
  const message = c?.message && !isLogTail(c.message) ? c.message : undefined;
  const how = c
    ? `container ${c.container} exited with code ${c.exitCode}${c.reason || message ? ` (${[c.reason, message].filter(Boolean).join(': ')})` : ''}`
    : (failed.summary ?? 'no failed container found');
  const text = `${head}: ${how}`;
  const lines = withoutAgentBanner(
    (failed.log ?? '')
      .split('\n')
      .map((line) => line.trimEnd())
      .filter((line) => line.length > 0),
  ).slice(-LOG_TAIL_LINES);
  if (lines.length === 0) return truncateEnd(text, MAX_EVENT_MESSAGE);
  const prefix = `${text}; log tail: `;
  const room = MAX_EVENT_MESSAGE - prefix.length;
  if (room < 40) return truncateEnd(text, MAX_EVENT_MESSAGE);
  let tail = lines.join(' | ');
  if (tail.length > room) tail = `…${tail.slice(tail.length - room + 1)}`;
  return `${prefix}${tail}`;
}

/**
 * The log without the agent's start-up banner. The banner says how the agent was configured, not
 * why the step failed, and a step that prints one line would otherwise be outnumbered by it. Only
 * the banner's own lines go: the agent writes it to stdout and its errors to stderr, so on a busy
 * node an error printed just after the banner can reach the log before it, and must stay.
 */
export function withoutAgentBanner(lines: string[]): string[] {
  for (let end = lines.length - 1; end > 0; end--) {
    if (lines[end] !== BANNER_RULE || !lines[end - 1]!.startsWith(BANNER_LAST_SETTING)) continue;
    const start = lines.lastIndexOf(BANNER_RULE, end - 1);
    const first = start >= 0 && lines[start + 1] === BANNER_SECOND_LINE ? start : 0;
    return [...lines.slice(0, first), ...lines.slice(end + 1)];
  }
  return lines;
}

/** A termination message the kubelet took from the log (several lines), not one the container wrote. */
function isLogTail(message: string): boolean {
  return message.includes('\n');
}

function truncateEnd(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The first container of the most recent failed pod that exited non-zero. */
export function failedContainerOf(pods: V1Pod[]): FailedContainer | undefined {
  return failedContainersOf(pods)[0];
}

/** The first non-zero exit of each failed pod, newest pod first (one per attempt of the Job). */
export function failedContainersOf(pods: V1Pod[]): FailedContainer[] {
  const time = (pod: V1Pod): number => new Date(pod.metadata?.creationTimestamp ?? 0).getTime();
  const newestFirst = [...pods].sort((a, b) => time(b) - time(a));
  const found: FailedContainer[] = [];
  for (const pod of newestFirst) {
    const failed = failedTermination(pod);
    if (!failed) continue;
    const { reason, message, exitCode } = failed.terminated;
    found.push({
      pod: nameOf(pod),
      container: failed.container,
      exitCode,
      ...(reason ? { reason } : {}),
      ...(message ? { message: message.trim() } : {}),
    });
  }
  return found;
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
  let candidates: FailedContainer[];
  try {
    const pods = await core.listNamespacedPod({
      namespace,
      labelSelector: `${KUBERNETES_NAMES.jobNameLabel}=${nodeStatus.jobName}`,
    });
    candidates = failedContainersOf(pods.items);
  } catch (e) {
    logger.debug(
      { nodeOp: nodeOp.metadata.name, error: errorMessage(e) },
      "the failed stage's pods could not be listed",
    );
    return failed;
  }
  if (candidates[0]) failed.container = candidates[0];
  // The kubelet may remove a failed pod's dead containers, log files and all, soon after the pod
  // failed. Newest attempt first: its log, else the log tail the kubelet saved in its status
  // (FallbackToLogsOnError); then the same for older attempts of the step.
  for (const candidate of candidates) {
    const log = await readLog(core, namespace, candidate, logger);
    const saved = candidate.message && isLogTail(candidate.message) ? candidate.message : '';
    const text = log.trim() !== '' ? log : saved;
    if (text.trim() === '') continue;
    failed.container = candidate;
    failed.log = text;
    break;
  }
  return failed;
}

async function readLog(core: CoreV1Api, namespace: string, c: FailedContainer, logger: Logger): Promise<string> {
  try {
    return await core.readNamespacedPodLog({
      name: c.pod,
      namespace,
      container: c.container,
      tailLines: LOG_LINES_READ,
      limitBytes: 16_384,
    });
  } catch (e) {
    logger.debug(
      { pod: c.pod, container: c.container, error: errorMessage(e) },
      'a failed container log could not be read',
    );
    return '';
  }
}
