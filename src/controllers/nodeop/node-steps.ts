/**
 * One node of a NodeOp, one step at a time. Each call looks at the node's status entry and the
 * cluster, does what is due next, and returns the new entry; the reconciler writes the entries.
 *
 *   Pending   started (slot taken, bootID recorded) → reboot pod → cordon → drain → Job created
 *   Running   the Job exists → (a Job we run ourselves, `spec.managedBy`: its next pod, retry or
 *             final status first, job-runner.ts) → its conditions and pods decide Completed or Failed
 *   Completed with rebootStatus `pending` → bootID changed and node Ready (reboot) or reboot pod
 *             Succeeded (other interrupts) → `completed` (interrupt-step.ts)
 *   terminal  uncordon what we cordoned (after failure only with uncordonOnFailure); cancel the
 *             reboot pod of a failed node
 *
 * Every action is idempotent (deterministic names, create-if-absent, ownership-checked cordon), so
 * redoing a step after a restart at any point is harmless.
 */
import type { V1Job } from '@kubernetes/client-node';
import { NODEOP_EVENT_REASONS as REASONS } from '../../api/names.js';
import type { NodeOpNodeStatus } from '../../api/nodeop.js';
import { isJobFinished, jobProgress, stuckDeadline } from '../../jobs/job-progress.js';
import { MERGE_PATCH } from '../../kube/client.js';
import { isRunByNodeOpController, type LostAttemptWord } from '../../jobs/job-runner/run-plan.js';
import { buildNodeJob } from '../../templates/nodeop-job.js';
import {
  createIfAbsent,
  ensureRebootPod,
  findJob,
  notify,
  RefusedAsInvalidError,
  type NodeOpContext,
  type NodeOpView,
} from './context.js';
import { disruptsNode, takeDisruption } from './disruption-step.js';
import { drainStep } from './drain-step.js';
import { runJob } from './job-runner.js';
import { failNode, finish, keepFailedJob, uncordonOurs } from './node-end.js';
import { followInterrupt } from './interrupt-step.js';
import { cutOffMessage, judgeFailedJob, lostAttemptWord } from './lost-in-reboot.js';
import { failedJobInput, waitForRebootPod } from './reboot-verdict.js';
import { earlierRecheck, type NodeStep, recheckOf, runningStatus, updated } from './node-status.js';
import { nameOf } from '../../api/object-meta.js';
import { ignoreNotFound } from '../../kube/writes.js';

export { nodeOpHolder } from './disruption-step.js';

export async function advanceNode(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
): Promise<NodeStep> {
  switch (status.phase) {
    case 'Preflight':
    case 'Pending':
      return prepare(ctx, op, node, status).catch((e: unknown) => refused(ctx, op, node, status, e));
    case 'Running':
      return followJob(ctx, op, node, status);
    case 'Completed':
      if (status.rebootStatus === 'pending') return followInterrupt(ctx, op, node, status);
      await finish(ctx, op, node, status);
      return { status };
    case 'Failed':
      await finish(ctx, op, node, status);
      return { status };
  }
}

/** An object of the node refused as invalid fails the node; the operation never ran, so our cordon goes. */
async function refused(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
  e: unknown,
): Promise<NodeStep> {
  if (!(e instanceof RefusedAsInvalidError)) throw e;
  if (await uncordonOurs(ctx, op, node))
    notify(ctx, op, node, 'Normal', REASONS.uncordoned, "uncordoned: the node's objects were refused");
  return failNode(ctx, op, node, status, e.message);
}

/** Pending: reboot pod, cordon, drain, then the Job (skipping what an earlier attempt already did). */
async function prepare(ctx: NodeOpContext, op: NodeOpView, node: string, status: NodeOpNodeStatus): Promise<NodeStep> {
  const now = ctx.clock.now();
  const jobName = status.jobName ?? '';
  const spec = op.nodeOp.spec;
  // From the cache only: it was synced before the first reconcile, so it misses a Job of this node
  // only right after this process created it, and then the create below says it exists. A GET
  // here was one 404 per node-stage.
  const existing = ctx.caches.jobs.get(jobName, op.namespace);
  if (existing) {
    const running = updated(status, { phase: 'Running', message: `Job ${jobName} created` }, now);
    // A Job we run whose pod a restart kept us from creating gets it now: no event would come for it.
    if (isRunByNodeOpController(existing)) return followJob(ctx, op, node, running);
    return { status: running };
  }

  // Created before the Job, so it is already there when the drain runs (drains skip it).
  await ensureRebootPod(ctx, op, node, jobName);
  // A held op disrupts nothing: no cordon, no drain, no reboot, until it is resumed (then it starts here).
  if (op.suspended && disruptsNode(op))
    return { status: updated(status, { message: 'suspended: not disrupting the node until resumed' }, now) };
  if (disruptsNode(op)) {
    // A node the cluster budgets (count or windows) refuse waits here, Pending, and is looked at again.
    const waiting = await takeDisruption(ctx, op, node, status, now);
    if (waiting) return waiting;
  }
  if (spec.cordon && spec.drainOptions?.enabled) {
    const waiting = await drainStep(ctx, op, node, status, spec.drainOptions, now);
    if (waiting) return waiting;
  }

  const job = buildNodeJob({
    nodeOp: op.nodeOp,
    node,
    jobName,
    settings: ctx.settings,
    writesSentinel: op.plan !== undefined,
    rebootsNode: op.plan?.rebootsNode ?? false,
    suspend: op.suspended,
  });
  let created: V1Job | undefined;
  if (
    await createIfAbsent(async () => {
      created = await ctx.clients.batch.createNamespacedJob({ namespace: op.namespace, body: job });
      ctx.caches.jobs.applyOwnWrite(created);
    }, 'Job')
  ) {
    notify(
      ctx,
      op,
      node,
      'Normal',
      REASONS.jobCreated,
      `created Job ${jobName}${op.suspended ? ' (suspended)' : ''}`,
      true,
    );
  }
  const running = updated(status, { phase: 'Running', message: `Job ${jobName} created` }, now);
  // Its first pod at once (the Job as created carries the pod template the cached copy lacks).
  if (created && isRunByNodeOpController(created)) {
    const run = await runJob(ctx, op, created, []);
    return { status: running, ...recheckOf(run) };
  }
  // Created before by an attempt whose status write was lost: the next step looks after it.
  if (!created) return followJob(ctx, op, node, running);
  return { status: running };
}

/** Running: the Job's conditions and pods decide. */
async function followJob(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
): Promise<NodeStep> {
  const now = ctx.clock.now();
  const jobName = status.jobName ?? '';
  const found = await findJob(ctx, op.namespace, jobName);
  if (!found) {
    const message = `Job ${jobName} was deleted before it finished (not by this NodeOp); create a new NodeOp to run the operation on this node again`;
    notify(ctx, op, node, 'Warning', REASONS.jobDeleted, message);
    return failNode(ctx, op, node, status, message);
  }
  await ensureRebootPod(ctx, op, node, jobName);
  let job = await syncSuspension(ctx, op, found);
  const pods = ctx.podsOfJob(op.namespace, jobName);
  const runsPods = isRunByNodeOpController(job);
  let run: Partial<NodeStep> = {};
  let lost: LostAttemptWord | undefined;
  if (runsPods) {
    // Asked before the runner retries: a retry of an attempt the reboot cut off would run every step again.
    if (op.plan && !isJobFinished(job))
      lost = lostAttemptWord(failedJobInput(ctx, op, node, status, now), pods, jobName);
    const result = await runJob(ctx, op, job, pods, undefined, lost);
    job = result.job;
    run = recheckOf(result);
  }
  const progress = jobProgress(job, pods, now, ctx.settings.stuckPodTimeoutMs);
  if (lost?.verdict === 'wait' && progress.state === 'running') return waitForRebootPod(status, jobName, progress, now);
  switch (progress.state) {
    case 'running': {
      const recheckAt = stuckDeadline(pods, ctx.settings.stuckPodTimeoutMs);
      const stuck = recheckAt
        ? { recheckAt, recheckReason: 'a pod waiting on a stuck reason is judged stuck then' }
        : {};
      return { status: runningStatus(status, progress.message, progress.restarts, now), ...earlierRecheck(stuck, run) };
    }
    case 'succeeded': {
      const message = lost?.verdict === 'succeeded' ? lost.message : progress.message;
      return jobSucceeded(ctx, op, node, status, { ...progress, message });
    }
    case 'stuck':
      // Ends the Job (its pods go, the Job turns Failed and is kept for the failure TTL) instead of leaving it pending forever.
      if (runsPods) {
        await runJob(ctx, op, job, pods, { reason: 'PodStuck', message: progress.message });
        await keepFailedJob(ctx, op, job);
      } else {
        await keepFailedJob(ctx, op, job, { activeDeadlineSeconds: 1 });
      }
      return failNode(ctx, op, node, status, progress.message, progress.restarts);
    case 'failed':
      return jobFailed(ctx, op, node, status, job, progress);
  }
}

/** A failed Job: the reboot pod's word decides when the NodeOp's reboot may have cut its pod off. */
async function jobFailed(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
  job: V1Job,
  progress: { message: string; restarts: number },
): Promise<NodeStep> {
  const now = ctx.clock.now();
  const jobName = status.jobName ?? '';
  const verdict = op.plan ? judgeFailedJob(failedJobInput(ctx, op, node, status, now)) : 'failed';
  if (verdict === 'succeeded')
    return jobSucceeded(ctx, op, node, status, { ...progress, message: cutOffMessage(jobName) });
  if (verdict === 'wait') return waitForRebootPod(status, jobName, progress, now);
  await keepFailedJob(ctx, op, job);
  return failNode(ctx, op, node, status, progress.message, progress.restarts);
}

/** The Job succeeded: the interrupt follows when the NodeOp has one, else the node is done. */
async function jobSucceeded(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
  progress: { message: string; restarts: number },
): Promise<NodeStep> {
  const now = ctx.clock.now();
  const jobName = status.jobName ?? '';
  if (op.plan) {
    notify(
      ctx,
      op,
      node,
      'Normal',
      REASONS.rebootRequested,
      `Job ${jobName} succeeded; the reboot pod now runs the interrupt`,
    );
    const waiting = op.plan.rebootsNode ? 'waiting for the node to reboot' : 'waiting for the interrupt';
    return {
      status: updated(
        status,
        {
          phase: 'Completed',
          rebootStatus: 'pending',
          restarts: progress.restarts,
          message: `${progress.message}; ${waiting}`,
        },
        now,
      ),
    };
  }
  notify(ctx, op, node, 'Normal', REASONS.nodeCompleted, progress.message, true);
  const done = updated(
    status,
    { phase: 'Completed', rebootStatus: 'not-requested', restarts: progress.restarts, message: progress.message },
    now,
  );
  await finish(ctx, op, node, done);
  return { status: done };
}

/**
 * The Job's `spec.suspend` follows the NodeOp's hold while it is unfinished (whoever runs its pods
 * stops or restarts its pod); resolves with the Job as it is then.
 */
async function syncSuspension(ctx: NodeOpContext, op: NodeOpView, job: V1Job): Promise<V1Job> {
  if ((job.spec?.suspend ?? false) === op.suspended || isJobFinished(job)) return job;
  const name = nameOf(job);
  const patched = await ignoreNotFound(
    ctx.clients.batch.patchNamespacedJob(
      { name, namespace: op.namespace, body: { spec: { suspend: op.suspended } } },
      MERGE_PATCH,
    ),
  );
  if (!patched) return job;
  ctx.logger.info(
    { nodeOp: op.key, job: name, suspend: op.suspended },
    op.suspended ? 'suspended the Job' : 'resumed the Job',
  );
  return { ...job, spec: { ...job.spec, suspend: op.suspended } as NonNullable<V1Job['spec']> };
}
