/**
 * The ideal wall time of a rollout benchmark: what a perfect operator on an idle machine would take,
 * so the measured wall time can be judged as a ratio. Pure, unit-tested.
 *
 * One SCR: ceil(nodes / budget) batches, each running every stage back to back:
 *   ceil(nodes / budget) × stages × stage time.
 * Several SCRs selecting the same nodes, pipelined: a node works on one SCR at a time, in priority
 * order, and each SCR admits at most its budget of nodes at once. With every SCR taking the nodes in
 * the same order, node i of SCR k starts when node i is done with SCR k-1 and node i-budget is done
 * with SCR k (its slot frees):
 *   start(k, i) = max(end(k-1, i), end(k, i - budget_k)),  end(k, i) = start(k, i) + stages_k × stage time.
 * With equal budgets and stages that is (ceil(nodes / budget) + scrs - 1) × stages × stage time, and
 * no schedule does better: the last SCR can start no node before it went through the scrs - 1 earlier
 * ones, and then still needs its ceil(nodes / budget) batches.
 */

export interface IdealScr {
  budget: number;
  stages: number;
}

export interface IdealInput {
  nodes: number;
  /** In priority order (the first runs first on every node). */
  scrs: IdealScr[];
  stageMs: number;
}

/** The pipelined ideal by the recurrence above (one SCR: the plain batch formula). */
export function idealRolloutMs({ nodes, scrs, stageMs }: IdealInput): number {
  if (nodes <= 0 || scrs.length === 0) return 0;
  let previousEnds: number[] = new Array<number>(nodes).fill(0);
  for (const { budget, stages } of scrs) {
    if (!(budget >= 1)) throw new Error(`a budget must be at least 1 (got ${budget})`);
    const ends: number[] = [];
    for (let i = 0; i < nodes; i++) {
      const slotFree = i >= budget ? ends[i - budget]! : 0;
      ends.push(Math.max(previousEnds[i]!, slotFree) + stages * stageMs);
    }
    previousEnds = ends;
  }
  return Math.max(...previousEnds);
}

/** How the ideal is computed, in words and numbers, for the benchmark's output. */
export function idealExplained(input: IdealInput): string {
  const { nodes, scrs, stageMs } = input;
  const seconds = idealRolloutMs(input) / 1000;
  const first = scrs[0];
  const uniform = first && scrs.every((s) => s.budget === first.budget && s.stages === first.stages);
  if (!first) return 'no SCR: 0 s';
  const stageS = stageMs / 1000;
  if (scrs.length === 1)
    return `ceil(${nodes} nodes / budget ${first.budget}) x ${first.stages} stages x ${stageS} s = ${seconds} s`;
  if (uniform)
    return (
      `pipelined: (ceil(${nodes} nodes / budget ${first.budget}) + ${scrs.length} SCRs - 1) x ${first.stages} stages x ${stageS} s = ${seconds} s ` +
      '(a node works on one SCR at a time in priority order; each SCR admits its budget of nodes at once, ' +
      'so SCR k runs batch b once SCR k-1 finished batch b and SCR k finished batch b-1)'
    );
  return `pipelined over ${scrs.length} SCRs (a node works on one SCR at a time in priority order; each SCR admits its budget of nodes at once) = ${seconds} s`;
}
