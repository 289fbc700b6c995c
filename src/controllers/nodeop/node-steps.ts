/**
 * One node of a NodeOp, one step at a time. Each call looks at the node's status entry and the
 * cluster, does what is due next, and returns the new entry; the reconciler writes the entries.
 *
 *   Pending   started (slot taken, bootID recorded) → reboot pod → cordon → drain → Job created
 *   Running   the Job exists → its conditions and pods decide Completed or Failed
 *   Completed with rebootStatus `pending` → bootID changed and node Ready (reboot) or reboot pod
 *             Succeeded (other interrupts) → `completed`
 *   terminal  uncordon what we cordoned (after failure only with uncordonOnFailure); cancel the
 *             reboot pod of a failed node
 *
 * Every action is idempotent (deterministic names, create-if-absent, ownership-checked cordon), so
 * redoing a step after a restart at any point is harmless.
 */
import type { V1Job, V1Node, V1Pod } from '@kubernetes/client-node';
import { KUBERNETES_NAMES, NODEOP_EVENT_REASONS as REASONS, NODEOP_NAMES } from '../../api/names.js';
import type { NodeOpNodeStatus } from '../../api/nodeop.js';
import { cordonedBy, cordonNode, uncordonNode } from '../../jobs/cordon.js';
import { evictPods } from '../../jobs/drain.js';
import { describeFailedContainer, isJobFinished, jobProgress, stuckDeadline } from '../../jobs/job-progress.js';
import { isNotFound, MERGE_PATCH } from '../../kube/client.js';
import { buildNodeJob } from '../../templates/nodeop-job.js';
import { rebootPodName } from '../../templates/object-names.js';
import { isNodeDone } from './aggregate.js';
import {
  createIfAbsent,
  ensureRebootPod,
  findJob,
  notify,
  RefusedAsInvalidError,
  type NodeOpContext,
  type NodeOpView,
} from './context.js';

export interface NodeStep {
  status: NodeOpNodeStatus;
  /** Look again at this time (ms since the epoch) even without an event. */
  recheckAt?: number;
}

type Change = Partial<Omit<NodeOpNodeStatus, 'lastUpdated'>>;

/** `status` with `change`; lastUpdated moves only when something changed (it times the reboot wait). */
export function updated(status: NodeOpNodeStatus, change: Change, now: number): NodeOpNodeStatus {
  const next = { ...status, ...change };
  const same = (Object.keys(change) as (keyof Change)[]).every((k) => next[k] === status[k]);
  return same ? status : { ...next, lastUpdated: new Date(now).toISOString() };
}

export const isNodeReady = (node: V1Node | undefined): boolean =>
  node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export const bootIdOf = (node: V1Node | undefined): string | undefined => node?.status?.nodeInfo?.bootID || undefined;

/** A reboot happened once the node reports another bootID than when it started, and is Ready again. */
export function rebootObserved(status: NodeOpNodeStatus, node: V1Node | undefined): boolean {
  const bootNow = bootIdOf(node);
  return bootNow !== undefined && status.bootID !== undefined && bootNow !== status.bootID && isNodeReady(node);
}

/** The entry of a node that starts now: it holds a concurrency slot from here on. */
export function startedStatus(
  op: NodeOpView,
  jobName: string,
  node: V1Node | undefined,
  now: number,
): NodeOpNodeStatus {
  const at = new Date(now).toISOString();
  const bootID = bootIdOf(node);
  return {
    phase: 'Pending',
    jobName,
    message: 'starting',
    rebootStatus: op.plan ? 'pending' : 'not-requested',
    startedAt: at,
    ...(bootID ? { bootID } : {}),
    lastUpdated: at,
  };
}

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
  if (await uncordonNode(ctx.clients.core, node, op.owner))
    notify(ctx, op, node, 'Normal', REASONS.uncordoned, "uncordoned: the node's objects were refused");
  return failNode(ctx, op, node, status, e.message);
}

/** Pending: reboot pod, cordon, drain, then the Job (skipping what an earlier attempt already did). */
async function prepare(ctx: NodeOpContext, op: NodeOpView, node: string, status: NodeOpNodeStatus): Promise<NodeStep> {
  const now = ctx.clock.now();
  const jobName = status.jobName ?? '';
  const spec = op.nodeOp.spec;
  if (await findJob(ctx, op.namespace, jobName))
    return { status: updated(status, { phase: 'Running', message: `Job ${jobName} created` }, now) };

  // Created before the Job, so it is already there when the drain runs (drains skip it).
  await ensureRebootPod(ctx, op, node, jobName);
  // A held op disrupts nothing: no cordon, no drain, until it is resumed (then it starts here).
  if (op.suspended && spec.cordon)
    return { status: updated(status, { message: 'suspended: not cordoning or draining until resumed' }, now) };
  if (spec.cordon) {
    const outcome = await cordonNode(ctx.clients.core, node, op.owner);
    if (outcome === 'cordoned') notify(ctx, op, node, 'Normal', REASONS.cordoned, 'cordoned');
  }
  if (spec.cordon && spec.drainOptions?.enabled) {
    const options = spec.drainOptions;
    const startedAtMs = status.startedAt ? Date.parse(status.startedAt) : now;
    const drainId = `${op.key}|${node}`;
    // The options' own exemptions (exemptNamespaces, exemptCordonTolerating) apply in planDrain.
    const exempt = (pod: V1Pod): boolean => isOperatorPod(ctx, pod);
    const result = ctx.drains.poll(
      drainId,
      (signal, report) =>
        evictPods(
          {
            core: ctx.clients.core,
            logger: ctx.logger,
            clock: ctx.clock,
            signal,
            exempt,
            // Reported in the node's message (`still there: <ns>/<pod> (<why>)`), which the Skyhook controller reads as drain blockers.
            onBlocked: (blocked) =>
              report(
                blocked.length > 0 ? `drain of node ${node} waiting; still there: ${blocked.join(', ')}` : undefined,
              ),
          },
          node,
          options,
          startedAtMs,
        ),
      () => ctx.enqueue(op.key),
    );
    if (!result)
      return { status: updated(status, { message: ctx.drains.progress(drainId) ?? `draining node ${node}` }, now) };
    if (result.outcome !== 'drained') {
      notify(ctx, op, node, 'Warning', REASONS.drainFailed, result.message);
      // The operation never ran on this node, so a cordon of ours is lifted whatever uncordonOnFailure says.
      if (await uncordonNode(ctx.clients.core, node, op.owner))
        notify(ctx, op, node, 'Normal', REASONS.uncordoned, 'uncordoned after the failed drain');
      return failNode(ctx, op, node, status, result.message);
    }
    if (result.evicted.length > 0)
      notify(ctx, op, node, 'Normal', REASONS.drained, `evicted ${result.evicted.join(', ')}`);
  }

  const job = buildNodeJob({
    nodeOp: op.nodeOp,
    node,
    jobName,
    settings: ctx.settings,
    writesSentinel: op.plan !== undefined,
    suspend: op.suspended,
  });
  if (
    await createIfAbsent(() => ctx.clients.batch.createNamespacedJob({ namespace: op.namespace, body: job }), 'Job')
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
  return { status: updated(status, { phase: 'Running', message: `Job ${jobName} created` }, now) };
}

/** Pods a drain leaves alone: every NodeOp's Job and reboot pods, and the operator itself. */
function isOperatorPod(ctx: NodeOpContext, pod: V1Pod): boolean {
  if (Object.hasOwn(pod.metadata?.labels ?? {}, NODEOP_NAMES.nodeOpLabel)) return true;
  return ctx.ownPod !== undefined && `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}` === ctx.ownPod;
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
  const job = await findJob(ctx, op.namespace, jobName);
  if (!job) {
    const message = `Job ${jobName} was deleted before it finished (not by this NodeOp); create a new NodeOp to run the operation on this node again`;
    notify(ctx, op, node, 'Warning', REASONS.jobDeleted, message);
    return failNode(ctx, op, node, status, message);
  }
  await ensureRebootPod(ctx, op, node, jobName);
  await syncSuspension(ctx, op, job);
  const pods = ctx.caches.pods
    .list(op.namespace)
    .filter((p) => p.metadata?.labels?.[KUBERNETES_NAMES.jobNameLabel] === jobName);
  const progress = jobProgress(job, pods, now, ctx.settings.stuckPodTimeoutMs);
  switch (progress.state) {
    case 'running': {
      const recheckAt = stuckDeadline(pods, ctx.settings.stuckPodTimeoutMs);
      return {
        status: runningStatus(status, progress.message, progress.restarts, now),
        ...(recheckAt ? { recheckAt } : {}),
      };
    }
    case 'succeeded': {
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
    case 'stuck':
      // Ends the Job (its pods go, the Job turns Failed and is kept for the failure TTL) instead of leaving it pending forever.
      await keepFailedJob(ctx, op, job, { activeDeadlineSeconds: 1 });
      return failNode(ctx, op, node, status, progress.message, progress.restarts);
    case 'failed':
      await keepFailedJob(ctx, op, job);
      return failNode(ctx, op, node, status, progress.message, progress.restarts);
  }
}

/** "Job X created" and "Job X is running (pod … Pending/Running)": progress nobody acts on. */
const isRoutineProgress = (message: string | undefined): boolean =>
  /^Job \S+ (created|is running)\b/.test(message ?? '');

/**
 * A running node's entry, written only when it says something new: restarts (the Skyhook controller
 * turns them into the erroring state), a pod waiting on a stuck reason, a suspension, or the end of
 * one of those. Routine pod progress would be a status write per pod phase that nothing reads, so
 * the entry keeps "Job … created" until the Job finishes.
 */
function runningStatus(status: NodeOpNodeStatus, message: string, restarts: number, now: number): NodeOpNodeStatus {
  const routine =
    restarts === (status.restarts ?? 0) && isRoutineProgress(message) && isRoutineProgress(status.message);
  return routine ? status : updated(status, { message, restarts }, now);
}

/** The Job's `spec.suspend` follows the NodeOp's hold while it is unfinished (the Job controller stops or restarts its pod). */
async function syncSuspension(ctx: NodeOpContext, op: NodeOpView, job: V1Job): Promise<void> {
  if ((job.spec?.suspend ?? false) === op.suspended || isJobFinished(job)) return;
  const name = job.metadata?.name ?? '';
  try {
    await ctx.clients.batch.patchNamespacedJob(
      { name, namespace: op.namespace, body: { spec: { suspend: op.suspended } } },
      MERGE_PATCH,
    );
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return;
  }
  ctx.logger.info(
    { nodeOp: op.key, job: name, suspend: op.suspended },
    op.suspended ? 'suspended the Job' : 'resumed the Job',
  );
}

/**
 * A failed Job is kept for the longer failure TTL (Jobs are created with the success TTL).
 * `ttlSecondsAfterFinished` stays mutable after the Job finished (the TTL controller re-reads it);
 * done before the node's status moves on, so a restart in between repeats it.
 */
async function keepFailedJob(
  ctx: NodeOpContext,
  op: NodeOpView,
  job: V1Job,
  extra: { activeDeadlineSeconds?: number } = {},
): Promise<void> {
  const ttl = ctx.settings.jobTtlFailedSeconds;
  if (job.spec?.ttlSecondsAfterFinished === ttl && extra.activeDeadlineSeconds === undefined) return;
  try {
    await ctx.clients.batch.patchNamespacedJob(
      {
        name: job.metadata?.name ?? '',
        namespace: op.namespace,
        body: { spec: { ttlSecondsAfterFinished: ttl, ...extra } },
      },
      MERGE_PATCH,
    );
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

async function failNode(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
  message: string,
  restarts?: number,
): Promise<NodeStep> {
  notify(ctx, op, node, 'Warning', REASONS.nodeFailed, message);
  const failed = updated(
    status,
    {
      phase: 'Failed',
      message,
      ...(restarts !== undefined ? { restarts } : {}),
      ...(op.plan ? { rebootStatus: 'cancelled' as const } : {}),
    },
    ctx.clock.now(),
  );
  await finish(ctx, op, node, failed);
  return { status: failed };
}

/** Completed, interrupt pending: a reboot is done when the bootID changed and the node is Ready; other interrupts when the pod succeeded. */
async function followInterrupt(
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
  return { status, recheckAt: deadline };
}

function hasFailedRun(pod: V1Pod): boolean {
  return (pod.status?.containerStatuses ?? []).some(
    (s) => (s.state?.terminated?.exitCode ?? 0) !== 0 || (s.lastState?.terminated?.exitCode ?? 0) !== 0,
  );
}

/** Terminal nodes: uncordon if we cordoned (after failure only when asked); a failed node's reboot pod goes. */
async function finish(ctx: NodeOpContext, op: NodeOpView, node: string, status: NodeOpNodeStatus): Promise<void> {
  const spec = op.nodeOp.spec;
  const nodeObject = ctx.caches.nodes.get(node);
  const release = isNodeDone(status) || (status.phase === 'Failed' && spec.uncordonOnFailure === true);
  // The cache says whether the annotation is ours; only then is the node read and written.
  if (spec.cordon && release && nodeObject && cordonedBy(nodeObject) === op.owner) {
    if (await uncordonNode(ctx.clients.core, node, op.owner))
      notify(ctx, op, node, 'Normal', REASONS.uncordoned, 'uncordoned');
  }
  if (status.phase === 'Failed') await cancelInterrupt(ctx, op, node, status);
}

async function cancelInterrupt(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  status: NodeOpNodeStatus,
): Promise<void> {
  const name = rebootPodName(status.jobName ?? '');
  if (!op.plan || !ctx.caches.pods.get(name, op.namespace)) return;
  try {
    await ctx.clients.core.deleteNamespacedPod({ name, namespace: op.namespace, gracePeriodSeconds: 0 });
    ctx.logger.info({ nodeOp: op.key, node, pod: name }, 'deleted the reboot pod of a failed node');
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
