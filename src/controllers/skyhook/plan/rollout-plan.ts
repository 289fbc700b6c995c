/**
 * The rollout of one SCR in one pass: its compartments (legacy budget or DeploymentPolicy), which
 * nodes each admits, the batch state to keep, and the `compartmentStatuses` to report. Batch state
 * is reset when the SCR completes or a package version changes, if the SCR or its policy asks to.
 */
import type { DeploymentPolicySpec } from '../../../api/deployment-policy.js';
import type { CompartmentStatus, SkyhookSpec } from '../../../api/skyhook.js';
import { INITIAL_BATCH_STATE, type BatchState } from './batch-strategy.js';
import { buildCompartments, type Compartment } from './compartments.js';
import type { SkyhookStatusValue } from '../../../api/node-state.js';
import type { NodeView } from './planner-types.js';
import { admitCompartment, compartmentStatus, type RolloutNode } from './rollout-admission.js';

export interface RolloutInput {
  spec: SkyhookSpec;
  policy?: DeploymentPolicySpec;
  /** Targeted nodes in work order. */
  targeted: NodeView[];
  nodes: Map<string, RolloutNode>;
  previous: Record<string, CompartmentStatus> | undefined;
  /** Every targeted node is complete: batches are not judged (upstream judges none then). */
  complete: boolean;
}

export interface RolloutPlan {
  compartments: Compartment[];
  admitted: Set<string>;
  batchStates: Map<string, BatchState>;
  /** Why a node of each compartment waits when it is not admitted. */
  holdOf: (node: string) => { reason: 'RolloutBudget' | 'RolloutStopped'; detail: string } | undefined;
}

export function planRollout(input: RolloutInput): RolloutPlan {
  const compartments = buildCompartments(input.spec, input.policy, input.targeted);
  const admitted = new Set<string>();
  const batchStates = new Map<string, BatchState>();
  const holds = new Map<string, { reason: 'RolloutBudget' | 'RolloutStopped'; detail: string }>();
  for (const compartment of compartments) {
    const nodes = compartment.nodes.map((name) => input.nodes.get(name)!);
    const previous = input.previous?.[compartment.name]?.batchState;
    if (input.complete) {
      if (compartment.strategy) batchStates.set(compartment.name, previous ?? INITIAL_BATCH_STATE);
      continue;
    }
    const admission = admitCompartment(compartment, nodes, previous);
    for (const node of admission.admitted) admitted.add(node);
    if (admission.batchState) batchStates.set(compartment.name, admission.batchState);
    const hold = admission.stopped
      ? {
          reason: 'RolloutStopped' as const,
          detail: `compartment ${compartment.name} stopped after ${admission.batchState?.consecutiveFailures ?? 0} failed batches`,
        }
      : {
          reason: 'RolloutBudget' as const,
          detail: `compartment ${compartment.name} works on ${compartment.ceiling} node(s) at a time${compartment.strategy ? ` (${compartment.strategy.kind} batches, batch ${admission.batchState?.currentBatch ?? 1})` : ''}`,
        };
    for (const node of compartment.nodes) holds.set(node, hold);
  }
  return { compartments, admitted, batchStates, holdOf: (node) => (admitted.has(node) ? undefined : holds.get(node)) };
}

/** Whether completion or a version change resets batch state: the SCR's option, else the policy's (default true), else no. */
export function resetsBatchState(spec: SkyhookSpec, policy: DeploymentPolicySpec | undefined): boolean {
  return (
    spec.deploymentPolicyOptions?.resetBatchStateOnCompletion ??
    (policy ? (policy.resetBatchStateOnCompletion ?? true) : false)
  );
}

export function compartmentStatuses(
  plan: RolloutPlan,
  nodeStatus: Record<string, SkyhookStatusValue>,
  reset: boolean,
): Record<string, CompartmentStatus> {
  const statuses: Record<string, CompartmentStatus> = {};
  for (const compartment of plan.compartments) {
    const state = plan.batchStates.get(compartment.name);
    statuses[compartment.name] = compartmentStatus(
      compartment,
      nodeStatus,
      state === undefined ? undefined : reset ? { ...INITIAL_BATCH_STATE } : state,
    );
  }
  return statuses;
}
