/**
 * How far one node's Job has got (pure): Job conditions and the Job's pods → succeeded, failed (with
 * the reason a person needs), stuck (a pod waiting on something that will not fix itself, such as
 * an image that cannot be pulled, for longer than the allowed time) or still running.
 */
import type { V1ContainerStateTerminated, V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';
import { nameOf } from '../api/object-meta.js';

export type JobProgress =
  | { state: 'running'; message: string; restarts: number }
  | { state: 'succeeded'; message: string; restarts: number }
  | { state: 'failed'; message: string; restarts: number }
  /** The Job would never finish by itself: the caller fails the node and ends the Job. */
  | { state: 'stuck'; message: string; restarts: number };

/** In the message of a Job ended as stuck: its pods' exits are then our doing, this message is the cause. */
export const STUCK_MARK = 'cannot make progress';

/** Waiting reasons that do not clear by waiting (or only by luck). */
export const STUCK_WAITING_REASONS: ReadonlySet<string> = new Set([
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

const IMAGE_HINT =
  "check that the image exists at that tag or digest (the package's image and version or containerSHA, or agentImageOverride) and that imagePullSecrets grant access";
const MISSING_IMAGE_HINT =
  "the registry has no such tag or digest: check that the image exists at that tag or digest (the package's image and version or containerSHA, or agentImageOverride)";
const CREDENTIALS_HINT =
  "the registry refused the pull's credentials: check the pull secret's credentials for that registry (the package's imagePullSecrets, or the operator's IMAGE_PULL_SECRET)";

/** What to do about an image that cannot be pulled, from the runtime's words (containerd, CRI-O). */
export function imagePullHint(message: string | undefined): string {
  if (
    /\b(401|403)\b|unauthorized|authentication required|authorization failed|access denied|forbidden/i.test(
      message ?? '',
    )
  )
    return CREDENTIALS_HINT;
  if (/: not found\b|manifest unknown|\bnotfound\b/i.test(message ?? '')) return MISSING_IMAGE_HINT;
  return IMAGE_HINT;
}

/** What to do about each stuck reason, said after the kubelet's own words. */
export const STUCK_HINTS: Readonly<Record<string, string>> = {
  ImagePullBackOff: IMAGE_HINT,
  ErrImagePull: IMAGE_HINT,
  InvalidImageName: "fix the image reference (the package's image, or agentImageOverride)",
  ErrImageNeverPull: 'the image is not on the node and imagePullPolicy is Never; load it onto the node or allow pulls',
  CrashLoopBackOff: 'the container keeps exiting; read its log (kubectl logs --previous)',
  CreateContainerConfigError:
    "a Secret, ConfigMap or key the env refers to is missing; create it or fix the reference (the package's env)",
  CreateContainerError: "the container runtime could not create the container; see the node's events",
  RunContainerError: "the container runtime could not start the container; see the node's events",
};

function conditionTrue(job: V1Job, ...types: string[]): { reason?: string; message?: string } | undefined {
  return job.status?.conditions?.find((c) => types.includes(c.type) && c.status === 'True');
}

function allStatuses(pod: V1Pod): V1ContainerStatus[] {
  return [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
}

const time = (value: Date | string | undefined): number => (value === undefined ? 0 : new Date(value).getTime());

/** The first container of `pod` (init containers first) that exited non-zero, now or before a restart. */
export function failedTermination(
  pod: V1Pod,
): { container: string; terminated: V1ContainerStateTerminated } | undefined {
  for (const status of allStatuses(pod)) {
    const terminated = status.state?.terminated ?? status.lastState?.terminated;
    if (terminated && terminated.exitCode !== 0) return { container: status.name, terminated };
  }
  return undefined;
}

/** The first container of `pod` that failed, as `container X exited with code N (reason: message)`. */
export function describeFailedContainer(pod: V1Pod): string | undefined {
  const failed = failedTermination(pod);
  if (failed) {
    const t = failed.terminated;
    const detail = [t.reason, t.message].filter(Boolean).join(': ');
    return `container ${failed.container} exited with code ${t.exitCode}${detail ? ` (${detail})` : ''}`;
  }
  return pod.status?.reason ? `${pod.status.reason}: ${pod.status.message ?? ''}`.trim() : undefined;
}

/** A container of an unfinished pod waiting for a stuck reason, with since when the pod has been waiting. */
function stuckContainer(pod: V1Pod): { detail: string; sinceMs: number } | undefined {
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed' || pod.metadata?.deletionTimestamp)
    return undefined;
  const waiting = allStatuses(pod).find((s) => STUCK_WAITING_REASONS.has(s.state?.waiting?.reason ?? ''));
  if (!waiting) return undefined;
  const reason = waiting.state?.waiting?.reason ?? '';
  const message = waiting.state?.waiting?.message;
  // The pod's latest transition (e.g. its init containers finishing) is when this wait began at the latest.
  const since = Math.max(
    time(pod.metadata?.creationTimestamp),
    ...(pod.status?.conditions ?? []).map((c) => time(c.lastTransitionTime)),
  );
  const hint =
    reason === 'ErrImagePull' || reason === 'ImagePullBackOff' ? imagePullHint(message) : STUCK_HINTS[reason];
  return {
    detail: `pod ${nameOf(pod)} container ${waiting.name}: ${reason}${message ? `: ${message}` : ''}${hint ? `; ${hint}` : ''}`,
    sinceMs: since,
  };
}

function latest(pods: V1Pod[]): V1Pod | undefined {
  return [...pods].sort((a, b) => time(b.metadata?.creationTimestamp) - time(a.metadata?.creationTimestamp))[0];
}

/** Complete or Failed: the Job controller will start no more pods. */
export function isJobFinished(job: V1Job): boolean {
  return conditionTrue(job, 'Complete', 'Failed') !== undefined;
}

export function jobProgress(job: V1Job, pods: V1Pod[], nowMs: number, stuckTimeoutMs: number): JobProgress {
  const name = nameOf(job);
  const restarts = job.status?.failed ?? 0;
  if (conditionTrue(job, 'Complete', 'SuccessCriteriaMet'))
    return { state: 'succeeded', message: `Job ${name} completed successfully`, restarts };
  const failed = conditionTrue(job, 'Failed', 'FailureTarget');
  if (failed) {
    const failedPod = latest(pods.filter((p) => p.status?.phase === 'Failed'));
    const podDetail = failedPod ? describeFailedContainer(failedPod) : undefined;
    const why = [failed.reason, failed.message].filter(Boolean).join(': ');
    return {
      state: 'failed',
      restarts,
      message: `Job ${name} failed${why ? ` (${why})` : ''}${podDetail ? `; pod ${failedPod?.metadata?.name ?? ''}: ${podDetail}` : ''}`,
    };
  }
  if (job.spec?.suspend) return { state: 'running', restarts, message: `Job ${name} is suspended` };
  // The Job runs one pod at a time to one completion, so a succeeded pod is the Job's success; the
  // Job controller says so only after its pod-event batching (about a second later).
  const succeededPod = pods.find((p) => p.status?.phase === 'Succeeded' && !p.metadata?.deletionTimestamp);
  if (succeededPod)
    return {
      state: 'succeeded',
      message: `Job ${name} completed successfully (pod ${nameOf(succeededPod)} succeeded)`,
      restarts,
    };
  for (const pod of pods) {
    const stuck = stuckContainer(pod);
    if (!stuck) continue;
    const waitedMs = nowMs - stuck.sinceMs;
    if (waitedMs >= stuckTimeoutMs) {
      return {
        state: 'stuck',
        restarts,
        message: `Job ${name} ${STUCK_MARK}: ${stuck.detail} (for ${Math.round(waitedMs / 1000)}s)`,
      };
    }
    return { state: 'running', restarts, message: `Job ${name} is waiting: ${stuck.detail}` };
  }
  const active = latest(pods.filter((p) => p.status?.phase === 'Running' || p.status?.phase === 'Pending'));
  const phase = active?.status?.phase;
  return {
    state: 'running',
    restarts,
    message: phase ? `Job ${name} is running (pod ${active?.metadata?.name ?? ''} ${phase})` : `Job ${name} is running`,
  };
}

/** When a stuck pod would be judged stuck (for the caller's requeue), or undefined when none is waiting. */
export function stuckDeadline(pods: V1Pod[], stuckTimeoutMs: number): number | undefined {
  const times = pods
    .map(stuckContainer)
    .filter((s) => s !== undefined)
    .map((s) => s.sinceMs + stuckTimeoutMs);
  return times.length > 0 ? Math.min(...times) : undefined;
}
