/** Label selectors evaluated as Kubernetes does; used by the Skyhook planner and the NodeOp controller alike. */
import type { LabelSelector } from './k8s-schemas.js';

/** An empty or absent selector selects every node, as upstream's nodeSelectors does. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) if (labels[key] !== value) return false;
  return (selector?.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const present = Object.hasOwn(labels, key);
    switch (operator) {
      case 'In':
        return present && values.includes(labels[key]!);
      case 'NotIn':
        return !present || !values.includes(labels[key]!);
      case 'Exists':
        return present;
      case 'DoesNotExist':
        return !present;
    }
    // An operator the API does not know selects nothing, as the apiserver's validation would reject it.
    return false;
  });
}
