/**
 * Which nodes an SCR targets and which of those it may work on: label selectors as Kubernetes
 * evaluates them, the `ignore` label, and upstream's taint rule (every taint of the node must be
 * tolerated by the unschedulable toleration, the SCR's additionalTolerations, and the runtime-required
 * toleration when the SCR sets runtimeRequired).
 */
import type { Toleration } from '../../../api/k8s-schemas.js';
import { DEFAULT_RUNTIME_REQUIRED_TAINT, IGNORE_NODE_LABEL } from '../../../api/names.js';
import type { SkyhookSpec } from '../../../api/skyhook.js';
import type { NodeView, TaintView } from './planner-types.js';

export const isIgnored = (node: NodeView): boolean => node.labels[IGNORE_NODE_LABEL] === 'true';

/** The node's taints the SCR cannot tolerate (empty: it may run there). */
export function untoleratedTaints(
  node: NodeView,
  spec: SkyhookSpec,
  runtimeRequiredTaint: TaintView = DEFAULT_RUNTIME_REQUIRED_TAINT,
): TaintView[] {
  const tolerations: Toleration[] = [
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
    ...(spec.additionalTolerations ?? []),
  ];
  if (spec.runtimeRequired) {
    tolerations.push({
      key: runtimeRequiredTaint.key,
      operator: 'Equal',
      value: runtimeRequiredTaint.value,
      effect: runtimeRequiredTaint.effect as Toleration['effect'],
    });
  }
  return node.taints.filter((taint) => !tolerations.some((toleration) => tolerates(toleration, taint)));
}

/** Kubernetes' ToleratesTaint: empty key with Exists matches every key; empty effect every effect. */
function tolerates(toleration: Toleration, taint: TaintView): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  return (toleration.value ?? '') === (taint.value ?? '');
}
