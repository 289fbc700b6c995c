/**
 * A DisruptionBudget's status, derived (pure) from what the arbiter and the planner know: the nodes
 * it matches, which of them are disrupted, and who waits for it. Waits come from two places: the
 * arbiter's recent refusals (NodeOps, maintenance, a Skyhook's cordon refused at write time) and the
 * Skyhook planner's holds (`waiting_<scr>: ClusterBudget: DisruptionBudget <name> …` on the node),
 * which never reach the arbiter. A wait keeps the `since` of the status before, so an operator
 * restart does not reset how long a node has waited.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { Condition } from '../../api/k8s-schemas.js';
import type { BudgetWait, DisruptionBudget, DisruptionBudgetStatus } from '../../api/disruption-budget.js';
import { NODE_ANNOTATION_PREFIXES } from '../../api/names.js';
import { nameOf } from '../../api/object-meta.js';
import type { BudgetUsage } from './budget-rules.js';
import type { RefusedWait } from './cluster-arbiter.js';
import { compareText } from '../../util/compare.js';

/** The condition type: True while the budget has room for one more node. */
export const SLOTS_AVAILABLE = 'SlotsAvailable';

const MAX_LISTED = 1000;

/** The planner's waits for `budget` written on the nodes: `skyhook/<scr>` per node. */
export function plannerWaits(budget: string, nodes: readonly V1Node[]): { node: string; holder: string }[] {
  const marker = `ClusterBudget: DisruptionBudget ${budget} `;
  return nodes.flatMap((node) =>
    Object.entries(node.metadata?.annotations ?? {})
      .filter(([key, value]) => key.startsWith(NODE_ANNOTATION_PREFIXES.waiting) && value.startsWith(marker))
      .map(([key]) => ({
        node: nameOf(node),
        holder: `skyhook/${key.slice(NODE_ANNOTATION_PREFIXES.waiting.length)}`,
      })),
  );
}

export interface BudgetStatusInput {
  budget: DisruptionBudget;
  /** The budget over the node cache (absent: the arbiter does not know it yet). */
  usage: BudgetUsage | undefined;
  refusals: readonly RefusedWait[];
  nodes: readonly V1Node[];
  now: number;
}

export function budgetStatus(input: BudgetStatusInput): DisruptionBudgetStatus {
  const { budget, usage, now } = input;
  const name = nameOf(budget);
  const before = budget.status;
  const sinceBefore = new Map((before?.waiting ?? []).map((w) => [`${w.node}|${w.holder}`, w.since]));
  const waits = new Map<string, BudgetWait>();
  const add = (node: string, holder: string, sinceMs: number): void => {
    const key = `${node}|${holder}`;
    if (waits.has(key) || usage?.disrupted.has(node)) return;
    waits.set(key, { node, holder, since: sinceBefore.get(key) ?? new Date(sinceMs).toISOString() });
  };
  for (const refusal of input.refusals) if (refusal.budget === name) add(refusal.node, refusal.holder, refusal.sinceMs);
  for (const wait of plannerWaits(name, input.nodes)) add(wait.node, wait.holder, now);
  const waiting = [...waits.values()].sort((a, b) => compareText(a.since, b.since) || compareText(a.node, b.node));
  const disrupted = [...(usage?.disrupted ?? [])].sort();
  const limit = usage?.limit ?? 0;
  const room = disrupted.length < limit;
  const condition: Condition = {
    type: SLOTS_AVAILABLE,
    status: room ? 'True' : 'False',
    reason: room ? 'SlotsAvailable' : 'BudgetFull',
    message: `${disrupted.length} of ${limit} node(s) disrupted (${usage?.matched.size ?? 0} matched)`,
    lastTransitionTime: new Date(now).toISOString(),
    ...(budget.metadata.generation !== undefined ? { observedGeneration: budget.metadata.generation } : {}),
  };
  const previous = before?.conditions?.find((c) => c.type === SLOTS_AVAILABLE);
  if (previous?.status === condition.status) condition.lastTransitionTime = previous.lastTransitionTime;
  return {
    ...(budget.metadata.generation !== undefined ? { observedGeneration: budget.metadata.generation } : {}),
    matched: usage?.matched.size ?? 0,
    maxDisrupted: limit,
    disrupted: disrupted.slice(0, MAX_LISTED),
    disruptedCount: disrupted.length,
    waiting: waiting.slice(0, MAX_LISTED),
    waitingCount: waiting.length,
    conditions: [condition],
  };
}
