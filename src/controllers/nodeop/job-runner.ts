/**
 * Carries out the next step of a stage Job the NodeOp controller runs itself (the pure rules are
 * jobs/job-runner/run-plan.ts): deletes the pods that must go, creates the next attempt's pod,
 * writes the status once the Job ends. Every write is idempotent (deterministic pod names,
 * create-if-absent, a final status computed from the pods), so a restart in between repeats it
 * harmlessly. Returns the Job as it is after the writes, for the progress read that follows.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { nameOf } from '../../api/object-meta.js';
import { buildJobPod, hasPodTemplate, jobPodName } from '../../jobs/job-runner/job-pod.js';
import { planJobRun, type EndRequest, type LostAttemptWord } from '../../jobs/job-runner/run-plan.js';
import { errorMessage, FIELD_MANAGER, MERGE_PATCH, statusCode } from '../../kube/client.js';
import { ignoreNotFound } from '../../kube/writes.js';
import { createIfAbsent, RefusedAsInvalidError, type NodeOpContext, type NodeOpView } from './context.js';

export interface JobRun {
  job: V1Job;
  recheckAt?: number;
  recheckReason?: string;
}

export async function runJob(
  ctx: NodeOpContext,
  op: NodeOpView,
  job: V1Job,
  pods: V1Pod[],
  end?: EndRequest,
  lost?: LostAttemptWord,
): Promise<JobRun> {
  const name = nameOf(job);
  const namespace = op.namespace;
  const plan = planJobRun(job, pods, ctx.clock.now(), end, lost);
  const log = ctx.logger.child({ nodeOp: op.key, job: name });

  for (const pod of plan.deletePods) {
    await ignoreNotFound(ctx.clients.core.deleteNamespacedPod({ name: pod, namespace }));
    log.info({ pod }, "deleted the Job's unfinished pod (the Job is suspended or ended)");
  }
  if (plan.createAttempt !== undefined) {
    // The informer's Job has no pod template; the Job just created has, and a retry reads it.
    const full = hasPodTemplate(job)
      ? job
      : await ignoreNotFound(ctx.clients.batch.readNamespacedJob({ name, namespace }));
    if (full) {
      const pod = buildJobPod(full, plan.createAttempt);
      let created: boolean;
      try {
        created = await createIfAbsent(async () => {
          const stored = await ctx.clients.core.createNamespacedPod({
            namespace,
            body: pod,
            fieldManager: FIELD_MANAGER,
          });
          // Cached at once: a reconcile before the pod's watch event would otherwise create it again (refused, 409).
          ctx.caches.pods.applyOwnWrite(stored);
        }, 'Job pod');
      } catch (e) {
        // Refused as invalid, it would be refused on every attempt: the Job fails with the API server's words.
        if (!(e instanceof RefusedAsInvalidError) || end) throw e;
        return runJob(ctx, op, job, pods, { reason: 'PodRefused', message: e.message });
      }
      if (created && plan.createAttempt > 0)
        log.info(
          { pod: jobPodName(name, plan.createAttempt) },
          'retrying the Job: created the pod of its next attempt',
        );
    }
  }
  let current = job;
  if (plan.status) current = (await writeStatus(ctx, job, namespace, plan.status)) ?? job;
  return {
    job: current,
    ...(plan.recheckAt !== undefined ? { recheckAt: plan.recheckAt, recheckReason: plan.recheckReason ?? '' } : {}),
  };
}

/**
 * Writes the Job's status. A 422 means the API server holds a status this one may not replace
 * (the Job ended meanwhile, by an earlier write the cache has not shown): the Job as it is then wins.
 */
async function writeStatus(
  ctx: NodeOpContext,
  job: V1Job,
  namespace: string,
  status: V1Job['status'],
): Promise<V1Job | undefined> {
  const name = nameOf(job);
  try {
    return await ignoreNotFound(
      ctx.clients.batch.patchNamespacedJobStatus(
        { name, namespace, body: { status }, fieldManager: FIELD_MANAGER },
        MERGE_PATCH,
      ),
    );
  } catch (e) {
    if (statusCode(e) !== 422) throw e;
    ctx.logger.warn(
      { job: `${namespace}/${name}`, error: errorMessage(e) },
      'the API server refused the Job status; reading the Job as it is',
    );
    return ignoreNotFound(ctx.clients.batch.readNamespacedJob({ name, namespace }));
  }
}
