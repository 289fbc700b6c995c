/**
 * How soon the next step starts after a stage Job completes, from the stage Jobs one watch recorded
 * (so all clocks agree): the node's next stage of the same SCR, and the next node of an SCR when one
 * of its nodes finishes and frees a budget slot. Pure, unit-tested.
 */
import type { StageJob } from '../test/e2e/skyhook-cluster.js';

/** The Jobs of each (SCR, node) pair in the order they appeared. */
export function jobsBySkyhookNode(jobs: Iterable<StageJob>): Map<string, StageJob[]> {
  const grouped = new Map<string, StageJob[]>();
  for (const job of [...jobs].sort((a, b) => a.seenAt - b.seenAt)) {
    const key = `${job.skyhook}/${job.node}`;
    grouped.set(key, [...(grouped.get(key) ?? []), job]);
  }
  return grouped;
}

/** Same SCR, same node: when each stage Job after the first appeared, after the previous one completed. */
export function nextStageGaps(grouped: Map<string, StageJob[]>): number[] {
  return [...grouped.values()].flatMap((jobs) => jobs.slice(1).map((job, i) => job.seenAt - (jobs[i]!.doneAt ?? NaN)));
}

/**
 * Budget slots, per SCR: the k-th of its nodes to finish frees the slot the (budget + k)-th to start
 * takes. Nodes not finished (a stalled run) are left out, and so are the starts they would free.
 */
export function nextNodeGaps(grouped: Map<string, StageJob[]>, budget: number, stagesPerNode: number): number[] {
  const bySkyhook = new Map<string, StageJob[][]>();
  for (const jobs of grouped.values()) {
    const skyhook = jobs[0]!.skyhook;
    bySkyhook.set(skyhook, [...(bySkyhook.get(skyhook) ?? []), jobs]);
  }
  return [...bySkyhook.values()].flatMap((nodes) => {
    const finishes = nodes
      .filter((jobs) => jobs.length === stagesPerNode && jobs.at(-1)?.doneAt !== undefined)
      .map((jobs) => jobs.at(-1)!.doneAt!)
      .sort((a, b) => a - b);
    const starts = nodes.map((jobs) => jobs[0]!.seenAt).sort((a, b) => a - b);
    return starts.slice(budget, budget + finishes.length).map((start, k) => start - finishes[k]!);
  });
}

/**
 * The most nodes of one SCR seen in progress at once (first Job seen, last stage not yet done), as the
 * recording shows it: above the budget means the budget was exceeded or the recording lagged (a watch
 * delayed on a saturated machine), and the next-node gaps above are then not to be trusted.
 */
export function maxInProgress(grouped: Map<string, StageJob[]>, stagesPerNode: number): number {
  const bySkyhook = new Map<string, [number, number][]>();
  for (const jobs of grouped.values()) {
    const last = jobs.at(-1)!;
    const end = jobs.length === stagesPerNode && last.doneAt !== undefined ? last.doneAt : Infinity;
    const skyhook = jobs[0]!.skyhook;
    bySkyhook.set(skyhook, [...(bySkyhook.get(skyhook) ?? []), [jobs[0]!.seenAt, end]]);
  }
  let max = 0;
  for (const spans of bySkyhook.values()) {
    // Ends sort before starts at the same instant: a slot freed and taken at once is not two nodes.
    const events = spans.flatMap(([start, end]): [number, number][] => [
      [start, 1],
      [end, -1],
    ]);
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let current = 0;
    for (const [, delta] of events) {
      current += delta;
      max = Math.max(max, current);
    }
  }
  return max;
}
