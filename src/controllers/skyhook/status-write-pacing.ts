/**
 * How often an SCR's status is written. During a rollout every finished stage changes the status
 * (nodeState, counts, nodePriority), and writing each change would cost one status write per
 * node-stage. Those fields are derived from the nodes on every pass, so a write can wait a little
 * and carry several changes at once: nothing is lost, the next pass recomputes them. A change the
 * planner itself reads back or that a person or tool waits for (the SCR's status value, config
 * updates, batch state, the set of true conditions, the package list, observedGeneration) is
 * written at once.
 *
 * The wait grows with the SCR's nodes. The status holds an entry per node in three maps, and the API
 * server spends CPU on a status write in proportion to its size (about 0.18 ms a node on our 2-core
 * benchmark machine: 188 ms for a 1000-node status, 897 ms for 5000, docs/design/history.md): at 5000 nodes
 * a write every 3 s would take a third of a core for one SCR. So progress waits 3 s per 1000 nodes
 * (3 s up to 1000, 15 s at 5000, at most 30 s), which keeps what the status writes cost the API
 * server per second flat as the fleet grows; decisive changes are still written at once at any size.
 */
import type { SkyhookStatus } from '../../api/skyhook.js';

/** The longest a progress-only status change waits for the next write, up to STATUS_NODES_PER_INTERVAL nodes. */
export const STATUS_PROGRESS_INTERVAL_MS = 3_000;
/** Each this many nodes in the status add one base interval to the wait. */
export const STATUS_NODES_PER_INTERVAL = 1_000;
/** The wait's ceiling, however large the SCR: progress stays visible within this. */
export const STATUS_PROGRESS_INTERVAL_MAX_MS = 30_000;

/** The wait for a status of `nodes` nodes (see the module comment), never below `baseMs`. */
export function progressIntervalMs(baseMs: number, nodes: number): number {
  const scaled = Math.min(STATUS_PROGRESS_INTERVAL_MAX_MS, (baseMs * nodes) / STATUS_NODES_PER_INTERVAL);
  return Math.max(baseMs, Math.round(scaled));
}

/** How many nodes a status covers: nodeStatus lists every one (the other per-node maps may be cut: status-size.ts). */
export function statusNodeCount(status: SkyhookStatus): number {
  return Object.keys(status.nodeStatus ?? {}).length;
}

export type StatusWriteDecision = { write: true } | { write: false; retryInMs: number };

export class StatusWritePacing {
  private readonly lastWrite = new Map<string, number>();

  private readonly intervalMs: number = STATUS_PROGRESS_INTERVAL_MS;

  constructor(intervalMs: number = STATUS_PROGRESS_INTERVAL_MS) {
    this.intervalMs = intervalMs;
  }

  decide(skyhook: string, current: SkyhookStatus | undefined, next: SkyhookStatus, now: number): StatusWriteDecision {
    const last = this.lastWrite.get(skyhook);
    if (last === undefined || hasDecisiveChange(current ?? {}, next)) return { write: true };
    const due = last + progressIntervalMs(this.intervalMs, statusNodeCount(next));
    return now >= due ? { write: true } : { write: false, retryInMs: due - now };
  }

  written(skyhook: string, now: number): void {
    this.lastWrite.set(skyhook, now);
  }

  forget(skyhook: string): void {
    this.lastWrite.delete(skyhook);
  }
}

/**
 * One pass's use of the pacing, as the reconciler does it: the status to write now, or nothing and
 * the time to look again (the earlier of the plan's own requeue and the paced write's due time), so
 * a held-back write is made on that requeue even when no other event comes.
 */
export function pacedStatusWrite(
  pacing: StatusWritePacing,
  skyhook: string,
  current: SkyhookStatus | undefined,
  next: SkyhookStatus | undefined,
  now: number,
  planRequeueMs: number | undefined,
): { write: boolean; requeueAfterMs?: number } {
  const decision = next === undefined ? undefined : pacing.decide(skyhook, current, next, now);
  const requeueAfterMs = Math.min(planRequeueMs ?? Infinity, decision?.write === false ? decision.retryInMs : Infinity);
  return { write: decision?.write === true, ...(Number.isFinite(requeueAfterMs) ? { requeueAfterMs } : {}) };
}

/** A change someone acts on, as opposed to rollout progress (see the module comment). */
export function hasDecisiveChange(current: SkyhookStatus, next: SkyhookStatus): boolean {
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  const trueConditions = (status: SkyhookStatus): string[] =>
    (status.conditions ?? [])
      .filter((c) => c.status === 'True')
      .map((c) => `${c.type}/${c.reason}`)
      .sort();
  const batchStates = (status: SkyhookStatus): unknown =>
    Object.fromEntries(
      Object.entries(status.compartmentStatuses ?? {}).map(([name, compartment]) => [
        name,
        compartment.batchState ?? null,
      ]),
    );
  return (
    current.status !== next.status ||
    current.observedGeneration !== next.observedGeneration ||
    current.packageList !== next.packageList ||
    current.nodeOrderOffset !== next.nodeOrderOffset ||
    !same(current.configUpdates, next.configUpdates) ||
    !same(current.nodeBootIds, next.nodeBootIds) ||
    !same(batchStates(current), batchStates(next)) ||
    !same(trueConditions(current), trueConditions(next))
  );
}
