/**
 * The pods on each node as the planner needs them: only for the podNonInterruptLabels barrier and
 * the pod opt-in annotation `skyhook.nvidia.com/non-interruptible: "true"`, so every pod is gathered
 * only when some SCR sets a barrier (else only opted-in pods), and a pod's change wakes only the SCRs
 * whose barrier it can move (its labels match their selector, or it opts in, before or after the
 * change, and they target its node).
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { POD_ANNOTATIONS } from '../../../api/names.js';
import type { Skyhook } from '../../../api/skyhook.js';
import { selectorMatches } from '../../../api/label-selector.js';
import type { PodView } from '../plan/planner-types.js';
import { nameOf } from '../../../api/object-meta.js';

/**
 * Only pods that can hold an interrupt are cached: bound to a node and not finished (a pod that
 * finishes leaves the selection, which the watch reports as a deletion).
 */
export const LIVE_BOUND_PODS_FIELD_SELECTOR = 'spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed';

export function podView(pod: V1Pod): PodView {
  const view: PodView = {
    namespace: pod.metadata?.namespace ?? '',
    name: nameOf(pod),
    labels: pod.metadata?.labels ?? {},
    phase: pod.status?.phase ?? 'Pending',
  };
  const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller)?.kind;
  if (owner !== undefined) view.ownerKind = owner;
  if (pod.metadata?.deletionTimestamp) view.terminating = true;
  if (optsIn(pod)) view.nonInterruptible = true;
  return view;
}

/** The workload opted the pod in: only the exact value "true" counts, as for the SCR annotations. */
const optsIn = (pod: V1Pod): boolean => pod.metadata?.annotations?.[POD_ANNOTATIONS.nonInterruptible] === 'true';

const hasBarrier = (scr: Skyhook): boolean => {
  const selector = scr.spec.podNonInterruptLabels;
  return Object.keys(selector?.matchLabels ?? {}).length > 0 || (selector?.matchExpressions ?? []).length > 0;
};

/** Whether any SCR has a podNonInterruptLabels barrier (else the planner never looks at pods). */
export const anyPodBarrier = (skyhooks: Skyhook[]): boolean => skyhooks.some(hasBarrier);

/** The pods of each node, by node name; `optedInOnly`: only pods that opt in by annotation. */
export function podViewsByNode(pods: V1Pod[], optedInOnly = false): Map<string, PodView[]> {
  const byNode = new Map<string, PodView[]>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (!node || (optedInOnly && !optsIn(pod))) continue;
    const views = byNode.get(node) ?? [];
    views.push(podView(pod));
    byNode.set(node, views);
  }
  return byNode;
}

/** What the barrier reads of a pod changed (not, say, a status heartbeat of its containers). */
export function podChangeMatters(pod: V1Pod, old: V1Pod): boolean {
  return (
    pod.status?.phase !== old.status?.phase ||
    pod.spec?.nodeName !== old.spec?.nodeName ||
    (pod.metadata?.deletionTimestamp === undefined) !== (old.metadata?.deletionTimestamp === undefined) ||
    JSON.stringify(pod.metadata?.labels ?? {}) !== JSON.stringify(old.metadata?.labels ?? {}) ||
    optsIn(pod) !== optsIn(old)
  );
}

/** SCRs whose barrier this pod (in any of `versions`) can hold or release on its node. */
export function skyhooksHeldByPod(
  versions: V1Pod[],
  skyhooks: Skyhook[],
  nodeOf: (name: string) => V1Node | undefined,
): string[] {
  const names = new Set<string>();
  for (const pod of versions) {
    const node = pod.spec?.nodeName ? nodeOf(pod.spec.nodeName) : undefined;
    if (!node) continue;
    for (const scr of skyhooks) {
      const held =
        optsIn(pod) || (hasBarrier(scr) && selectorMatches(scr.spec.podNonInterruptLabels, pod.metadata?.labels ?? {}));
      if (!held) continue;
      if (selectorMatches(scr.spec.nodeSelectors, node.metadata?.labels ?? {})) names.add(nameOf(scr));
    }
  }
  return [...names];
}
