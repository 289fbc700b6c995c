/**
 * What the NodeOp controller does next for a stage Job it runs itself (pure): a Job whose
 * `spec.managedBy` is ours (NODEOP_NAMES.jobManager) is ignored by Kubernetes' Job controller, so
 * its pod, its retries, its deadline, its suspension and its final status are ours to keep.
 *
 * Why: a stage Job run by the Job controller costs the API server about eight writes of the Job
 * controller's (four Job status updates, two Events, the pod and the removal of the pod's tracking
 * finalizer) on top of ours. A NodeOp Job is the simplest Job there is (one pod, one completion,
 * `restartPolicy: Never`, pinned to its node), so running it ourselves costs two: the pod, and one
 * status write when it ends. The Job stays the object people and tools look at (`kubectl get jobs`,
 * its pods' logs, its TTL: the TTL-after-finished controller reads any finished Job).
 *
 * The rules follow the Job controller's for this shape:
 * - one pod at a time, named `<job>-<attempt>`: attempt k is created once k attempts have failed, so
 *   a repeated create (a restart, a cache that lags) finds the pod already there;
 * - a failed pod is retried after 10 s, doubling to at most 6 minutes, until more than
 *   `backoffLimit` have failed: then the Job is Failed (BackoffLimitExceeded);
 * - `activeDeadlineSeconds` from the Job's start: then its pods are deleted and it is Failed
 *   (DeadlineExceeded);
 * - a suspended Job has no running pod (it is deleted; that is no failure), and one is created
 *   again when it is resumed;
 * - a pod deleted by someone else while it ran is retried without counting as a failure (the Job
 *   controller counts it unless a podFailurePolicy says otherwise; an evicted stage is not the
 *   package's fault);
 * - a succeeded pod completes the Job (SuccessCriteriaMet and Complete, as the API server requires
 *   of a Job another controller manages), written once with the pod's finish time, so writing it
 *   again after a restart changes nothing;
 * - unlike the Job controller, a failed attempt that the node's own reboot may have cut off is not
 *   retried on sight: the caller asks the reboot pod first (controllers/nodeop/lost-in-reboot.ts)
 *   and passes its word. `wait` holds the retry (and the backoff limit) until it speaks;
 *   `succeeded` completes the Job, because every step had run and a retry would run them again
 *   and reboot the node a second time.
 */
import type { V1Job, V1JobCondition, V1JobStatus, V1Pod } from '@kubernetes/client-node';
import { NODEOP_NAMES } from '../../api/names.js';
import { nameOf } from '../../api/object-meta.js';

/** The Job controller's pod backoff: 10 s after the first failure, doubling, at most 6 minutes. */
export const RETRY_BACKOFF_BASE_MS = 10_000;
export const RETRY_BACKOFF_MAX_MS = 360_000;

export interface JobRunPlan {
  /** Create the pod of this attempt (the caller builds it from the Job's template: job-pod.ts). */
  createAttempt?: number;
  /** Unfinished pods to delete (suspension, deadline, the Job ended). */
  deletePods: string[];
  /** Written to the Job's status subresource (a merge patch of `status`). */
  status?: V1JobStatus;
  /** Look again then (a retry's backoff ends, the deadline passes). */
  recheckAt?: number;
  recheckReason?: string;
}

/** Why a Job is ended from outside its own rules: its pod waits on something that will not clear. */
export interface EndRequest {
  reason: string;
  message: string;
}

/** The reboot pod's word on the Job's latest failed attempt, when the node's own reboot may have cut it off. */
export type LostAttemptWord = { verdict: 'wait' } | { verdict: 'succeeded'; message: string };

/** True when this controller, not Kubernetes' Job controller, runs the Job's pods. */
export function isRunByNodeOpController(job: V1Job): boolean {
  return job.spec?.managedBy === NODEOP_NAMES.jobManager;
}

const time = (value: Date | string | undefined): number => (value === undefined ? 0 : new Date(value).getTime());

/** The API server keeps Job times to the second; writing the same second again changes nothing. */
const seconds = (ms: number): Date => new Date(Math.floor(ms / 1000) * 1000);

function hasTrueCondition(job: V1Job, ...types: string[]): boolean {
  return (job.status?.conditions ?? []).some((c) => types.includes(c.type) && c.status === 'True');
}

/** The attempt of a pod this controller created (`<job>-<attempt>`), or undefined for any other pod. */
export function attemptOf(jobName: string, pod: V1Pod): number | undefined {
  const name = nameOf(pod);
  if (!name.startsWith(`${jobName}-`)) return undefined;
  const rest = name.slice(jobName.length + 1);
  return /^\d+$/.test(rest) ? Number(rest) : undefined;
}

const isFinishedPhase = (pod: V1Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** When a finished pod finished: its containers' latest exit, else its latest transition. */
export function finishedAtMs(pod: V1Pod): number {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const exits = statuses.map((s) => time(s.state?.terminated?.finishedAt)).filter((t) => t > 0);
  if (exits.length > 0) return Math.max(...exits);
  const transitions = (pod.status?.conditions ?? []).map((c) => time(c.lastTransitionTime));
  return Math.max(time(pod.metadata?.creationTimestamp), ...transitions);
}

interface PodsView {
  succeeded: V1Pod | undefined;
  /** Failed pods not being deleted. */
  failed: V1Pod[];
  /** Unfinished pods not being deleted. */
  active: V1Pod[];
  /** Unfinished pods being deleted: the next attempt waits until they are gone. */
  terminating: V1Pod[];
}

function viewPods(pods: V1Pod[]): PodsView {
  const live = (p: V1Pod): boolean => !p.metadata?.deletionTimestamp;
  return {
    succeeded: pods.find((p) => p.status?.phase === 'Succeeded'),
    failed: pods.filter((p) => p.status?.phase === 'Failed' && live(p)),
    active: pods.filter((p) => !isFinishedPhase(p) && live(p)),
    terminating: pods.filter((p) => !isFinishedPhase(p) && !live(p)),
  };
}

/**
 * Attempts that failed: the count the status keeps, the failed pods there are, and the attempt
 * numbers they carry (a failed pod someone deleted still left its successors' numbers behind).
 */
function failuresOf(job: V1Job, view: PodsView): number {
  const jobName = nameOf(job);
  const attempts = view.failed.map((p) => (attemptOf(jobName, p) ?? -1) + 1);
  return Math.max(job.status?.failed ?? 0, view.failed.length, ...attempts);
}

/** When the Job started: as recorded, else its earliest pod's creation, else now (not started yet). */
function startMs(job: V1Job, pods: V1Pod[], nowMs: number): number {
  if (job.status?.startTime) return time(job.status.startTime);
  const created = pods.map((p) => time(p.metadata?.creationTimestamp)).filter((t) => t > 0);
  return created.length > 0 ? Math.min(...created) : nowMs;
}

function condition(type: string, reason: string, message: string, atMs: number): V1JobCondition {
  const at = seconds(atMs);
  return { type, status: 'True', reason, message, lastProbeTime: at, lastTransitionTime: at };
}

/** The final status of a Job that ends now: the API server's rules for a Job another controller manages. */
function finalStatus(
  job: V1Job,
  pods: V1Pod[],
  nowMs: number,
  outcome: { succeeded: V1Pod; message?: string } | { failed: EndRequest },
  failures: number,
): V1JobStatus {
  const started = seconds(startMs(job, pods, nowMs));
  const base: V1JobStatus = {
    startTime: started,
    active: 0,
    ready: 0,
    terminating: 0,
    failed: failures,
    uncountedTerminatedPods: {},
  };
  if ('succeeded' in outcome) {
    // Deterministic (the pod's finish), never before the start: a repeated write must not move it.
    const completed = seconds(Math.max(finishedAtMs(outcome.succeeded), started.getTime()));
    const message = outcome.message ?? `pod ${nameOf(outcome.succeeded)} succeeded`;
    return {
      ...base,
      succeeded: 1,
      completionTime: completed,
      conditions: [
        condition('SuccessCriteriaMet', 'CompletionsReached', message, completed.getTime()),
        condition('Complete', 'CompletionsReached', message, completed.getTime()),
      ],
    };
  }
  const { reason, message } = outcome.failed;
  return {
    ...base,
    conditions: [condition('FailureTarget', reason, message, nowMs), condition('Failed', reason, message, nowMs)],
  };
}

function latestFailed(view: PodsView): V1Pod | undefined {
  return [...view.failed].sort((a, b) => finishedAtMs(b) - finishedAtMs(a))[0];
}

export function retryDelayMs(failures: number): number {
  return Math.min(RETRY_BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1), RETRY_BACKOFF_MAX_MS);
}

/**
 * The next step for `job` (run by this controller) with `pods` (its pods as the cache shows them)
 * at `nowMs`; `end` ends it as Failed now (a stuck pod). A Job being deleted, or finished, is only
 * cleaned up: its unfinished pods go.
 */
export function planJobRun(
  job: V1Job,
  pods: V1Pod[],
  nowMs: number,
  end?: EndRequest,
  lost?: LostAttemptWord,
): JobRunPlan {
  const view = viewPods(pods);
  const activeNames = view.active.map((p) => nameOf(p));
  if (job.metadata?.deletionTimestamp) return { deletePods: [] };
  if (hasTrueCondition(job, 'Complete', 'Failed')) return { deletePods: activeNames };

  const failures = failuresOf(job, view);
  const fail = (request: EndRequest): JobRunPlan => ({
    deletePods: activeNames,
    status: finalStatus(job, pods, nowMs, { failed: request }, failures),
  });
  if (end) return fail(end);
  if (view.succeeded) {
    return { deletePods: activeNames, status: finalStatus(job, pods, nowMs, { succeeded: view.succeeded }, failures) };
  }
  const lostAttempt = lost && view.active.length === 0 ? latestFailed(view) : undefined;
  if (lostAttempt && lost?.verdict === 'succeeded') {
    const outcome = { succeeded: lostAttempt, message: lost.message };
    return { deletePods: [], status: finalStatus(job, pods, nowMs, outcome, failures) };
  }
  if (lostAttempt && lost?.verdict === 'wait') {
    return failures > (job.status?.failed ?? 0) ? { deletePods: [], status: { failed: failures } } : { deletePods: [] };
  }
  const backoffLimit = job.spec?.backoffLimit ?? 6;
  if (failures > backoffLimit) {
    return fail({
      reason: 'BackoffLimitExceeded',
      message: `Job has reached the specified backoff limit (${backoffLimit})`,
    });
  }
  // A newly counted failure is recorded at once: `kubectl get job` shows it, and the count survives the pod.
  const counted: Pick<JobRunPlan, 'status'> =
    failures > (job.status?.failed ?? 0) ? { status: { failed: failures } } : {};
  if (job.spec?.suspend) return { deletePods: activeNames, ...counted };

  const deadline = job.spec?.activeDeadlineSeconds;
  const deadlineAt = deadline === undefined ? undefined : startMs(job, pods, nowMs) + deadline * 1000;
  if (deadlineAt !== undefined && pods.length > 0 && nowMs >= deadlineAt) {
    return fail({ reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' });
  }
  const atDeadline =
    deadlineAt === undefined
      ? {}
      : { recheckAt: deadlineAt, recheckReason: 'the Job reaches its active deadline then' };
  if (view.active.length > 0 || view.terminating.length > 0) return { deletePods: [], ...counted, ...atDeadline };

  if (failures > 0) {
    const lastFailure = Math.max(...view.failed.map(finishedAtMs), 0);
    const retryAt = lastFailure + retryDelayMs(failures);
    if (nowMs < retryAt) {
      // The deadline may come first: then the Job fails then instead of retrying.
      if (deadlineAt !== undefined && deadlineAt <= retryAt) return { deletePods: [], ...counted, ...atDeadline };
      return { deletePods: [], ...counted, recheckAt: retryAt, recheckReason: 'a failed Job pod is retried then' };
    }
  }
  return { deletePods: [], createAttempt: failures, ...counted, ...atDeadline };
}
