/**
 * Which Job and pod events are news to the NodeOp reconciler (pure). Each event used to wake the
 * NodeOp, and a stage Job's life is about ten of them (the Job's active and ready counts, the pod
 * scheduled, each init container started and ended, Running, Succeeded, the Job's two completion
 * conditions): at 1000 nodes that was 9 reconciles per NodeOp, almost all of which found nothing
 * to do and asked for the safety recheck. Now an event wakes the NodeOp only when something the
 * reconcile reads has changed: `jobNews` and `podNews` are exactly those fields (see
 * jobs/job-progress.ts, node-steps.ts followInterrupt, teardown.ts), so a skipped event is one whose
 * reconcile would have done and written nothing. Time-based decisions (a pod stuck for too long, a
 * reboot timing out) never depended on events: the reconcile asks to be woken for them.
 */
import type { V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';
import type { NodeOp } from '../../api/nodeop.js';
import { STUCK_WAITING_REASONS, failedTermination } from '../../jobs/job-progress.js';

/** What routes an event to a NodeOp: labels and owners (a change wakes the old and the new owner). */
function routing(object: V1Job | V1Pod): string {
  const refs = (object.metadata?.ownerReferences ?? []).map((r) => [r.kind, r.name, r.uid]);
  return JSON.stringify([object.metadata?.labels ?? {}, refs]);
}

/**
 * What the reconciler reads of a Job: whether it succeeded (Complete or SuccessCriteriaMet, or a
 * succeeded pod of the Job, `succeededPod`, from the pod cache: jobProgress reads that as the Job's
 * success, and the pod's own event already woke the NodeOp), whether it is finished (Complete or
 * Failed: pacing frees its node's slot then), its other True conditions (Failed, FailureTarget, with
 * reason and message), failed pods (restarts), suspend and the retention it patches, and whether it
 * is being deleted. So of a stage Job's success (its pod Succeeded, then SuccessCriteriaMet, then
 * Complete) only the pod's event and the finish are news, and the finish only to a NodeOp that may
 * start another node (`isOnlyFinish`, controller.ts).
 */
export function jobNews(job: V1Job, succeededPod = false, withFinish = true): string {
  const trueConditions = (job.status?.conditions ?? []).filter((c) => c.status === 'True');
  const has = (...types: string[]): boolean => trueConditions.some((c) => types.includes(c.type));
  const conditions = trueConditions
    .filter((c) => c.type !== 'Complete' && c.type !== 'SuccessCriteriaMet')
    .map((c) => [c.type, c.reason ?? '', c.message ?? '']);
  return JSON.stringify([
    succeededPod || has('Complete', 'SuccessCriteriaMet'),
    withFinish && has('Complete', 'Failed'),
    withFinish ? conditions : conditions.filter(([type]) => type !== 'Failed'),
    job.status?.failed ?? 0,
    job.spec?.suspend ?? false,
    job.spec?.ttlSecondsAfterFinished,
    job.spec?.activeDeadlineSeconds,
    job.metadata?.deletionTimestamp !== undefined,
  ]);
}

/** A Job just created: nothing has happened to it yet (its creator already wrote the node's status). */
export function jobHasNews(job: V1Job): boolean {
  return (job.status?.conditions ?? []).some((c) => c.status === 'True') || (job.status?.failed ?? 0) > 0;
}

/** `succeededPod`: a pod of the Job has succeeded, as the pod cache shows now (see jobNews). */
export function jobChanged(job: V1Job, old: V1Job, succeededPod = false): boolean {
  return jobNews(job, succeededPod) !== jobNews(old, succeededPod) || routing(job) !== routing(old);
}

/**
 * True when the Job's only news is that it finished (its outcome was already known: a succeeded
 * pod or SuccessCriteriaMet, FailureTarget): that frees its node's concurrency slot and nothing
 * else, so it is news only to a NodeOp that may still start a node.
 */
export function isOnlyFinish(job: V1Job, old: V1Job, succeededPod = false): boolean {
  return (
    jobNews(job, succeededPod, false) === jobNews(old, succeededPod, false) &&
    routing(job) === routing(old) &&
    jobNews(job, succeededPod) !== jobNews(old, succeededPod)
  );
}

/** A Job pod that succeeded (and is not being deleted): jobProgress reads it as the Job's success. */
export function isSucceededPod(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' && !pod.metadata?.deletionTimestamp;
}

/**
 * True while a NodeOp may still start a node: it selects nodes (one may match later), or one of
 * its targetNodes has no entry yet (in `entries`: by default its status as read). A NodeOp that
 * started all its targets waits on no slot.
 */
export function mayStartNodes(
  op: Pick<NodeOp, 'spec' | 'status'> | undefined,
  entries: Readonly<Record<string, unknown>> = op?.status?.nodeStatuses ?? {},
): boolean {
  const targets = op?.spec.targetNodes;
  if (!op || !targets) return true;
  return targets.some((node) => entries[node] === undefined);
}

function containerNews(status: V1ContainerStatus): unknown[] | undefined {
  const waiting = status.state?.waiting;
  if (waiting?.reason && STUCK_WAITING_REASONS.has(waiting.reason))
    return [status.name, 'stuck', waiting.reason, waiting.message ?? ''];
  return undefined;
}

/**
 * What the reconciler reads of a Job's pod or a reboot pod: whether it is still running (Pending
 * and Running read the same but for the routine "is running (pod … Running)" message, which is never
 * written over another routine one: node-status.ts runningStatus), finished as what, being
 * deleted; containers waiting for a reason that does not clear by itself, with since when (the
 * pod's transition times), and the first failed container's exit (the failure message).
 */
export function podNews(pod: V1Pod): string {
  const phase = pod.status?.phase;
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const stuck = statuses.map(containerNews).filter((s) => s !== undefined);
  const failed = failedTermination(pod);
  return JSON.stringify([
    phase === 'Pending' || phase === 'Running' || phase === undefined ? 'active' : phase,
    pod.status?.reason ?? '',
    pod.status?.message ?? '',
    pod.metadata?.deletionTimestamp !== undefined,
    stuck,
    stuck.length > 0
      ? [pod.metadata?.creationTimestamp, (pod.status?.conditions ?? []).map((c) => c.lastTransitionTime)]
      : [],
    failed ? [failed.container, failed.terminated.exitCode, failed.terminated.reason, failed.terminated.message] : [],
  ]);
}

const FRESH_POD = podNews({});

/** A pod just created and still unremarkable (Pending, nothing stuck or failed) is no news. */
export function podHasNews(pod: V1Pod): boolean {
  return podNews(pod) !== FRESH_POD;
}

export function podChanged(pod: V1Pod, old: V1Pod): boolean {
  return podNews(pod) !== podNews(old) || routing(pod) !== routing(old);
}
