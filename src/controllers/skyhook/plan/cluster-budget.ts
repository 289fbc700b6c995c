/**
 * The cluster-wide DisruptionBudgets as one planning run sees them: a ledger over the snapshot
 * (controllers/disruption/budget-rules.ts, the arbiter's own rules) that every SCR of the run draws
 * from in priority order. A node that an SCR's interrupt would newly disrupt is admitted only while
 * the budgets have room, takes a slot when its cordon is planned, and otherwise waits visibly with
 * reason ClusterBudget. The apply path asks the live arbiter again before the cordon is written.
 */
import { isForeignCordon } from '../../../jobs/cordon/claims.js';
import type { DisruptionLedger } from '../../disruption/budget-rules.js';
import type { NodeHold } from './node-holds.js';
import type { NodeView } from './planner-types.js';
import type { RolloutNode } from './rollout-admission.js';
import type { RolloutPlan } from './rollout-plan.js';

export const CLUSTER_BUDGET_HOLD = 'ClusterBudget';

/**
 * Would cordoning `node` for an interrupt newly disrupt it? Not when it is disrupted already (joining
 * uses no slot), nor under a cordon nobody claimed (a person's: the SCR works under it, writes nothing).
 */
function newlyDisrupts(ledger: DisruptionLedger, node: NodeView): boolean {
  return !ledger.isDisrupted(node.name) && !isForeignCordon(node);
}

/** The hold of a node the budgets refuse now (without taking a slot), if the node needs one. */
export function clusterBudgetRefusal(ledger: DisruptionLedger | undefined, node: NodeView): NodeHold | undefined {
  if (ledger === undefined || ledger.empty || !newlyDisrupts(ledger, node)) return undefined;
  const decision = ledger.decide(node.name);
  return decision.granted ? undefined : { reason: CLUSTER_BUDGET_HOLD, detail: decision.reason };
}

/** Takes the node's slot for a cordon about to be planned; the hold when the budgets refuse it. */
export function takeClusterSlot(ledger: DisruptionLedger | undefined, node: NodeView): NodeHold | undefined {
  if (ledger === undefined || ledger.empty || !newlyDisrupts(ledger, node)) return undefined;
  const decision = ledger.take(node.name);
  return decision.granted ? undefined : { reason: CLUSTER_BUDGET_HOLD, detail: decision.reason };
}

/**
 * A node both its rollout and a cluster budget hold is shown waiting for the cluster budget only if
 * its compartment had room for it: otherwise it would wait without the cluster budget too.
 */
export function rolloutOrClusterHold(
  rollout: RolloutPlan,
  nodes: ReadonlyMap<string, RolloutNode>,
  node: string,
  clusterHold: NodeHold | undefined,
): NodeHold | undefined {
  const ruled = rollout.holdOf(node);
  if (clusterHold === undefined || ruled?.reason === 'RolloutStopped') return ruled;
  const compartment = rollout.compartments.find((candidate) => candidate.nodes.includes(node));
  if (compartment === undefined) return clusterHold;
  const atWork = compartment.nodes.filter((name) => {
    const rolloutNode = nodes.get(name);
    return rollout.admitted.has(name) || rolloutNode?.busy === true || rolloutNode?.holdsCordon === true;
  });
  return atWork.length < compartment.ceiling ? clusterHold : ruled;
}
