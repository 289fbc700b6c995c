/**
 * Which pods a drain evicts (pure), with kubectl drain's rules: DaemonSet pods and mirror pods are
 * skipped (their controller or the kubelet would just put them back), pods without a controller are
 * evicted only with `force` and pods with emptyDir data only with `deleteEmptyDirData`; otherwise
 * the drain refuses and names them, so nothing is lost silently.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { KUBERNETES_NAMES } from '../api/names.js';
import type { DrainOptions } from '../api/nodeop.js';
import { nameOf } from '../api/object-meta.js';

export interface RefusedPod {
  pod: V1Pod;
  why: string;
}

export interface DrainPlan {
  /** Pods to evict (or already terminating: they are waited for). */
  evict: V1Pod[];
  /** Pods the options do not allow to remove; a drain with any of these fails. */
  refused: RefusedPod[];
}

export function podRef(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${nameOf(pod)}`;
}

const isFinished = (pod: V1Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
const isMirror = (pod: V1Pod): boolean =>
  pod.metadata?.annotations?.[KUBERNETES_NAMES.mirrorPodAnnotation] !== undefined;
const controllerOf = (pod: V1Pod) => pod.metadata?.ownerReferences?.find((ref) => ref.controller);
const hasEmptyDir = (pod: V1Pod): boolean => (pod.spec?.volumes ?? []).some((v) => v.emptyDir !== undefined);

/**
 * `exempt` marks pods the drain must leave alone whatever the options (the operator's own pods: Job
 * and reboot pods, the operator itself); the options may exempt more (`exemptByOptions`).
 */
export function planDrain(pods: V1Pod[], options: DrainOptions, exempt: (pod: V1Pod) => boolean): DrainPlan {
  const plan: DrainPlan = { evict: [], refused: [] };
  for (const pod of pods) {
    if (isMirror(pod) || exempt(pod) || exemptByOptions(pod, options)) continue;
    if (isFinished(pod)) {
      // A finished pod is left alone, unless it is being deleted (an evicted pod turns Failed once its
      // containers stop, then lingers until the kubelet has cleaned up): it is waited for, as kubectl
      // drain waits for each pod it removed to be gone whatever its phase.
      if (pod.metadata?.deletionTimestamp) plan.evict.push(pod);
      continue;
    }
    const controller = controllerOf(pod);
    if (controller?.kind === 'DaemonSet') {
      if (options.ignoreDaemonSets ?? true) continue;
      plan.refused.push({ pod, why: 'DaemonSet-managed (set drainOptions.ignoreDaemonSets to skip them)' });
    } else if (!controller && !options.force) {
      plan.refused.push({ pod, why: 'not managed by a controller (set drainOptions.force to evict it)' });
    } else if (hasEmptyDir(pod) && !options.deleteEmptyDirData) {
      plan.refused.push({ pod, why: 'uses emptyDir data (set drainOptions.deleteEmptyDirData to evict it)' });
    } else {
      plan.evict.push(pod);
    }
  }
  return plan;
}

/** The taint a cordon stands for; pods tolerating it are meant to stay on cordoned nodes. */
const UNSCHEDULABLE_TAINT = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' } as const;

/**
 * Tolerates the unschedulable taint, as Kubernetes matches tolerations: same or empty key with
 * Exists, same or empty effect. Upstream Skyhook's drain leaves these pods alone (with kube-system),
 * which a Skyhook stage's NodeOp asks for with `exemptCordonTolerating`; kubectl's drain does not.
 */
export function toleratesCordon(pod: V1Pod): boolean {
  return (pod.spec?.tolerations ?? []).some((t) => {
    const keyMatches = t.key === UNSCHEDULABLE_TAINT.key || ((t.key ?? '') === '' && t.operator === 'Exists');
    const effectMatches = (t.effect ?? '') === '' || t.effect === UNSCHEDULABLE_TAINT.effect;
    const valueMatches = t.operator === 'Exists' || (t.value ?? '') === '';
    return keyMatches && effectMatches && valueMatches;
  });
}

/** Pods the drain options exempt: in `exemptNamespaces`, or tolerating the cordon with `exemptCordonTolerating`. */
export function exemptByOptions(pod: V1Pod, options: DrainOptions): boolean {
  if (options.exemptNamespaces?.includes(pod.metadata?.namespace ?? '')) return true;
  return options.exemptCordonTolerating === true && toleratesCordon(pod);
}
