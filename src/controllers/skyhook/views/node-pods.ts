/**
 * The pods on each node as the planner needs them: only for the podNonInterruptLabels barrier, so
 * they are gathered only when some SCR sets it, and a pod's change wakes only the SCRs whose barrier
 * it can move (its labels match their selector, before or after the change, and they target its node).
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
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
  return view;
}

const hasBarrier = (scr: Skyhook): boolean => {
  const selector = scr.spec.podNonInterruptLabels;
  return Object.keys(selector?.matchLabels ?? {}).length > 0 || (selector?.matchExpressions ?? []).length > 0;
};

/** Whether any SCR has a podNonInterruptLabels barrier (else the planner never looks at pods). */
export const anyPodBarrier = (skyhooks: Skyhook[]): boolean => skyhooks.some(hasBarrier);

/** The pods of each node, by node name. */
export function podViewsByNode(pods: V1Pod[]): Map<string, PodView[]> {
  const byNode = new Map<string, PodView[]>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (!node) continue;
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
    JSON.stringify(pod.metadata?.labels ?? {}) !== JSON.stringify(old.metadata?.labels ?? {})
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
      if (!hasBarrier(scr) || !selectorMatches(scr.spec.podNonInterruptLabels, pod.metadata?.labels ?? {})) continue;
      if (selectorMatches(scr.spec.nodeSelectors, node.metadata?.labels ?? {})) names.add(nameOf(scr));
    }
  }
  return [...names];
}
