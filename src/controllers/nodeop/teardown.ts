/**
 * What a deleted NodeOp must stop before it may go: its Jobs and their pods (and its reboot
 * pods). Garbage collection alone would do it only after the NodeOp is gone, and a pod being
 * deleted keeps running through its grace period, so a replacement NodeOp (the Skyhook controller
 * recreates a stage's op under the same name once the old one is gone) could run the same stage
 * beside it on the same node: two agents applying one package at once.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { ignoreNotFound } from '../../kube/writes.js';
import type { NodeOpContext, NodeOpView } from './context.js';
import { nameOf } from '../../api/object-meta.js';
import { objectKey, type Informer } from '../../kube/informer.js';
import { JOBS_BY_OWNER_UID, PODS_BY_NODEOP } from './cache-indexes.js';

const isPodFinished = (phase: string | undefined): boolean => phase === 'Succeeded' || phase === 'Failed';

/** The lookups `nodeOpWork` needs: the Job and pod caches (with cache-indexes.ts's indexes) and a Job's pods. */
export interface NodeOpWorkLookups {
  jobs: Pick<Informer<V1Job>, 'byIndex'>;
  pods: Pick<Informer<V1Pod>, 'byIndex'>;
  podsOfJob(namespace: string, jobName: string): V1Pod[];
}

/** The NodeOp's Jobs (those it owns) and its unfinished pods (its Jobs' and its reboot pods), from the indexes. */
export function nodeOpWork(
  ctx: NodeOpWorkLookups,
  op: Pick<NodeOpView, 'nodeOp' | 'namespace'>,
): { jobs: V1Job[]; pods: V1Pod[] } {
  const { name = '', uid = '' } = op.nodeOp.metadata;
  const jobs = ctx.jobs.byIndex(JOBS_BY_OWNER_UID, uid).filter((job) => job.metadata?.namespace === op.namespace);
  const pods = new Map<string, V1Pod>();
  for (const job of jobs) for (const pod of ctx.podsOfJob(op.namespace, nameOf(job))) pods.set(objectKey(pod), pod);
  for (const pod of ctx.pods.byIndex(PODS_BY_NODEOP, `${op.namespace}/${name}`))
    if (pod.metadata?.ownerReferences?.some((ref) => ref.uid === uid)) pods.set(objectKey(pod), pod);
  return { jobs, pods: [...pods.values()].filter((pod) => !isPodFinished(pod.status?.phase)) };
}

/**
 * Deletes the NodeOp's Jobs and its unfinished pods; resolves with how many of its pods are still
 * unfinished (0: nothing of it runs any more).
 */
export async function stopNodeOpWork(ctx: NodeOpContext, op: NodeOpView): Promise<number> {
  const { jobs, pods } = nodeOpWork({ jobs: ctx.caches.jobs, pods: ctx.caches.pods, podsOfJob: ctx.podsOfJob }, op);
  // Jobs first: a Job whose pod is deleted while it lives would start another pod.
  for (const job of jobs.filter((j) => !j.metadata?.deletionTimestamp)) {
    await ignoreNotFound(
      ctx.clients.batch.deleteNamespacedJob({
        name: nameOf(job),
        namespace: op.namespace,
        propagationPolicy: 'Background',
      }),
    );
  }
  for (const pod of pods.filter((p) => !p.metadata?.deletionTimestamp)) {
    await ignoreNotFound(ctx.clients.core.deleteNamespacedPod({ name: nameOf(pod), namespace: op.namespace }));
  }
  return pods.length;
}
