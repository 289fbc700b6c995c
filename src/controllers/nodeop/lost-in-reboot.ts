/**
 * A Job the node's own reboot cut off (pure). The reboot pod acts on the sentinel file the Job
 * writes as its last act, so the host may go down before containerd has recorded that last
 * container's exit; after the boot the Job's pod reads as failed (exit code unknown) although every
 * step succeeded. Judged failed, the stage would run again and reboot the node a second time. The
 * reboot pod knows better: it exits 0 only after it has seen the sentinel (it ran the interrupt, or
 * after the boot it found its marker of having run it).
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { LostAttemptWord } from '../../jobs/job-runner/run-plan.js';
import { bootIdOf } from './node-status.js';

export type FailedJobVerdict = 'succeeded' | 'wait' | 'failed';

export interface FailedJobInput {
  /** Whether the NodeOp's interrupt reboots the node. */
  rebootsNode: boolean;
  rebootPod: V1Pod | undefined;
  /** The node's bootID when the NodeOp started there. */
  bootAtStart: string | undefined;
  node: V1Node | undefined;
  now: number;
  /** How long to wait for the reboot pod's word at most (ms since the epoch). */
  deadline: number;
}

/**
 * A reboot pod restarted after the boot runs its marker check at once; one still running this long
 * after its restart found no marker and waits for a sentinel, so the reboot was not its own.
 */
export const MARKER_CHECK_GRACE_MS = 10_000;

/** Whether a failed Job whose NodeOp has an interrupt had in fact succeeded, may have, or failed. */
export function judgeFailedJob(input: FailedJobInput): FailedJobVerdict {
  const { rebootPod } = input;
  if (rebootPod?.status?.phase === 'Succeeded') return 'succeeded';
  if (!input.rebootsNode || !rebootPod || rebootPod.status?.phase === 'Failed') return 'failed';
  const bootNow = bootIdOf(input.node);
  const rebooted = bootNow !== undefined && input.bootAtStart !== undefined && bootNow !== input.bootAtStart;
  if (!rebooted || input.now >= input.deadline) return 'failed';
  const container = rebootPod.status?.containerStatuses?.[0];
  const runningSince = container?.state?.running?.startedAt;
  const waitsForSentinel =
    (container?.restartCount ?? 0) > 0 &&
    runningSince !== undefined &&
    input.now - new Date(runningSince).getTime() > MARKER_CHECK_GRACE_MS;
  return waitsForSentinel ? 'failed' : 'wait';
}

export const cutOffMessage = (jobName: string): string =>
  `Job ${jobName}'s pod was cut off by the node's reboot after its last step succeeded (the reboot pod saw its sentinel)`;

export const waitingMessage = (jobName: string): string =>
  `Job ${jobName}'s pod was lost in the node's reboot; waiting for the reboot pod to say whether the Job had succeeded`;

/**
 * The reboot pod's word for a Job this controller runs whose latest attempt failed and none runs:
 * the job runner would otherwise retry it on sight, and the retry would run every step again and
 * reboot the node a second time. Undefined when the attempt simply failed (retry as usual).
 */
export function lostAttemptWord(input: FailedJobInput, pods: V1Pod[], jobName: string): LostAttemptWord | undefined {
  const live = pods.filter((p) => !p.metadata?.deletionTimestamp);
  if (live.length === 0 || live.some((p) => p.status?.phase !== 'Failed')) return undefined;
  const verdict = judgeFailedJob(input);
  if (verdict === 'wait') return { verdict: 'wait' };
  return verdict === 'succeeded' ? { verdict: 'succeeded', message: cutOffMessage(jobName) } : undefined;
}
