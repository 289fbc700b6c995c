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
 * Which clock orders the starts and ends of `maxInProgress`. `arrival`: Date.now() when the watcher
 * saw each event; the Jobs and their pods come through two watches, each late by its own amount on a
 * loaded API server, so a node's end (its pod Succeeded) may arrive after the next node's Job, which
 * the operator created only once it had seen that end: a count above the budget then, with none in
 * the cluster. `revision`: the events' resourceVersions, etcd's revisions, one order for the whole
 * cluster whatever each watch's lag, so a count above the budget is one the cluster really had.
 */
export type InProgressClock = 'arrival' | 'revision';

const rvNumber = (rv: string | undefined): number | undefined =>
  rv !== undefined && /^\d+$/.test(rv) ? Number(rv) : undefined;

/** True when every Job carries the resourceVersions the `revision` clock needs (a done one its doneRv too). */
export function hasRevisions(grouped: Map<string, StageJob[]>): boolean {
  return [...grouped.values()].every((jobs) =>
    jobs.every((j) => rvNumber(j.seenRv) !== undefined && (j.doneAt === undefined || rvNumber(j.doneRv) !== undefined)),
  );
}

/**
 * The most nodes of one SCR in progress at once (first Job seen, last stage not yet done), in the
 * order of `clock` (see InProgressClock): above the budget by `revision` is a budget overshoot; by
 * `arrival` it may be only the recording's lag, and the next-node gaps above are then not to be trusted.
 */
export function maxInProgress(
  grouped: Map<string, StageJob[]>,
  stagesPerNode: number,
  clock: InProgressClock = 'arrival',
): number {
  const start = (j: StageJob): number => (clock === 'arrival' ? j.seenAt : (rvNumber(j.seenRv) ?? NaN));
  const end = (j: StageJob): number | undefined => (clock === 'arrival' ? j.doneAt : rvNumber(j.doneRv));
  const bySkyhook = new Map<string, [number, number][]>();
  for (const jobs of grouped.values()) {
    const last = jobs.at(-1)!;
    const lastEnd = end(last);
    const finish = jobs.length === stagesPerNode && lastEnd !== undefined ? lastEnd : Infinity;
    const skyhook = jobs[0]!.skyhook;
    bySkyhook.set(skyhook, [...(bySkyhook.get(skyhook) ?? []), [Math.min(...jobs.map(start)), finish]]);
  }
  return Math.max(0, ...[...bySkyhook.values()].map(maxOverlap));
}

/**
 * The most stage Jobs of one SCR running at once (each from its first event to its done), in the
 * order of `clock`: the work itself, where maxInProgress also counts a node between two stages. A
 * node that left its slot between stages (it turned `blocked`, e.g. tainted not-ready by the node
 * lifecycle controller, and the slot went to another node, as upstream does) shows in maxInProgress
 * and not here; a budget the operator really exceeded shows in both.
 */
export function maxStageJobsRunning(grouped: Map<string, StageJob[]>, clock: InProgressClock = 'arrival'): number {
  const bySkyhook = new Map<string, [number, number][]>();
  for (const jobs of grouped.values())
    for (const j of jobs) {
      const from = clock === 'arrival' ? j.seenAt : (rvNumber(j.seenRv) ?? NaN);
      const to = clock === 'arrival' ? j.doneAt : rvNumber(j.doneRv);
      bySkyhook.set(j.skyhook, [...(bySkyhook.get(j.skyhook) ?? []), [from, to ?? Infinity]]);
    }
  return Math.max(0, ...[...bySkyhook.values()].map(maxOverlap));
}

/** The most spans open at once; ends sort before starts at the same instant (a slot freed and taken at once is not two). */
function maxOverlap(spans: [number, number][]): number {
  const events = spans.flatMap(([from, to]): [number, number][] => [
    [from, 1],
    [to, -1],
  ]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let max = 0;
  for (const [, delta] of events) {
    current += delta;
    max = Math.max(max, current);
  }
  return max;
}

/**
 * Priority chains: on each node, from the last stage Job of one SCR finishing to the first stage Job
 * of the next SCR (in `order`, priority order) appearing there. Nodes where either is missing are
 * left out.
 */
export function nextSkyhookGaps(grouped: Map<string, StageJob[]>, order: readonly string[]): number[] {
  const nodes = new Set([...grouped.values()].map((jobs) => jobs[0]!.node));
  const gaps: number[] = [];
  for (const node of nodes)
    for (let i = 1; i < order.length; i++) {
      const before = grouped.get(`${order[i - 1]}/${node}`);
      const after = grouped.get(`${order[i]}/${node}`);
      const done = before?.at(-1)?.doneAt;
      if (!after?.length || done === undefined) continue;
      gaps.push(after[0]!.seenAt - done);
    }
  return gaps;
}
