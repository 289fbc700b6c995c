/**
 * How many of an SCR's nodes may be in progress at once, and which ones. The budget comes from a
 * function of the SCR and its nodes so DeploymentPolicy compartments can replace the single legacy
 * compartment without touching the planner. Admission keeps nodes already at work (batch
 * stickiness) before it starts fresh ones, so a budget is never exceeded by a node coming back.
 */

/**
 * Legacy interruptionBudget's ceiling over `matched` nodes (upstream's `__default__` compartment):
 * percent, else count, else 100%; count → max(1, min(n, count)); percent → max(1, floor(n × percent
 * / 100)); at least 1 node even with 0 nodes or a budget of 0.
 */
export function budgetCeiling(
  budget: { percent?: number | null; count?: number | null } | undefined,
  matched: number,
): number {
  const percent = budget?.percent ?? (budget?.count === undefined || budget.count === null ? 100 : undefined);
  if (percent !== undefined) return Math.max(1, Math.floor((matched * percent) / 100));
  return Math.max(1, Math.min(matched, budget?.count ?? 0));
}

export interface AdmissionCandidate {
  node: string;
  /** A stage op of this SCR is running there: the node is at work whether admitted or not. */
  busy: boolean;
  /** The node is ready for this SCR (eligible, not complete, not waiting on another SCR). */
  ready: boolean;
  /** Started earlier and not finished (nodePriority entry, or persisted in_progress/erroring status). */
  sticky: boolean;
  /** Non-interruptible pods hold its next step (non-interrupt-wait.ts): it takes a slot only if no other node wants it. */
  waitsForPods?: boolean;
}

/**
 * The nodes allowed to work now: every ready busy node, then sticky ones, then fresh ones in the
 * given order (nodes held by non-interruptible pods after all the others), while the nodes at work
 * (busy ones count even when not ready) stay within the ceiling.
 */
export function admitNodes(candidates: AdmissionCandidate[], ceiling: number): Set<string> {
  const admitted = new Set<string>();
  let atWork = candidates.filter((candidate) => candidate.busy).length;
  for (const candidate of candidates) if (candidate.busy && candidate.ready) admitted.add(candidate.node);
  const waiting = candidates.filter((candidate) => candidate.ready && !candidate.busy);
  const free = waiting.filter((c) => c.waitsForPods !== true);
  const held = waiting.filter((c) => c.waitsForPods === true);
  const order = [free, held].flatMap((group) => [...group.filter((c) => c.sticky), ...group.filter((c) => !c.sticky)]);
  for (const candidate of order) {
    if (atWork >= ceiling) break;
    admitted.add(candidate.node);
    atWork += 1;
  }
  return admitted;
}
