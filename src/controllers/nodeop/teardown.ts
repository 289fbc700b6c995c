/**
 * What a deleted NodeOp must stop before it may go: its Jobs and their pods (and its reboot
 * pods). Garbage collection alone would do it only after the NodeOp is gone, and a pod being
 * deleted keeps running through its grace period, so a replacement NodeOp (the Skyhook controller
 * recreates a stage's op under the same name once the old one is gone) could run the same stage
 * beside it on the same node: two agents applying one package at once.
 */
import { KUBERNETES_NAMES, NODEOP_NAMES } from '../../api/names.js';
import { ignoreNotFound } from '../../kube/writes.js';
import type { NodeOpContext, NodeOpView } from './context.js';
import { nameOf } from '../../api/object-meta.js';

const isPodFinished = (phase: string | undefined): boolean => phase === 'Succeeded' || phase === 'Failed';

/**
 * Deletes the NodeOp's Jobs (those it owns) and its unfinished pods; resolves with how many of its
 * pods are still unfinished (0: nothing of it runs any more).
 */
export async function stopNodeOpWork(ctx: NodeOpContext, op: NodeOpView): Promise<number> {
  const { name = '', uid = '' } = op.nodeOp.metadata;
  const jobs = ctx.caches.jobs
    .list(op.namespace)
    .filter((job) => job.metadata?.ownerReferences?.some((ref) => ref.uid === uid));
  const jobNames = new Set(jobs.map((job) => nameOf(job)));
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
  const pods = ctx.caches.pods.list(op.namespace).filter((pod) => {
    const labels = pod.metadata?.labels ?? {};
    const ours =
      jobNames.has(labels[KUBERNETES_NAMES.jobNameLabel] ?? '') ||
      (labels[NODEOP_NAMES.nodeOpLabel] === name && pod.metadata?.ownerReferences?.some((ref) => ref.uid === uid));
    return ours && !isPodFinished(pod.status?.phase);
  });
  for (const pod of pods.filter((p) => !p.metadata?.deletionTimestamp)) {
    await ignoreNotFound(ctx.clients.core.deleteNamespacedPod({ name: nameOf(pod), namespace: op.namespace }));
  }
  return pods.length;
}
