/** A DisruptionBudget for tests. */
import type { DisruptionBudget, DisruptionBudgetSpec } from '../../../../src/api/disruption-budget.js';

export function budget(name: string, spec: DisruptionBudgetSpec): DisruptionBudget {
  return { apiVersion: 'skyhook.nvidia.com/v1alpha1', kind: 'DisruptionBudget', metadata: { name }, spec };
}
