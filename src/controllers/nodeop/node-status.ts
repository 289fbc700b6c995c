/**
 * A node's entry in a NodeOp's status and the pure rules over it: when lastUpdated moves, what a
 * started or running node's entry says, and how a reboot is recognised (another bootID, Ready). Kept
 * apart from the steps (node-steps.ts) that do the cluster work, and read by the controller's event
 * filter as well.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { NodeOpNodeStatus } from '../../api/nodeop.js';
import type { NodeOpView } from './context.js';

export interface NodeStep {
  status: NodeOpNodeStatus;
  /** Look again at this time (ms since the epoch) even without an event. */
  recheckAt?: number;
  /** Why it must look again then (the requeue's reason). */
  recheckReason?: string;
}

type Change = Partial<Omit<NodeOpNodeStatus, 'lastUpdated'>>;

/** `status` with `change`; lastUpdated moves only when something changed (it times the reboot wait). */
export function updated(status: NodeOpNodeStatus, change: Change, now: number): NodeOpNodeStatus {
  const next = { ...status, ...change };
  const same = (Object.keys(change) as (keyof Change)[]).every((k) => next[k] === status[k]);
  return same ? status : { ...next, lastUpdated: new Date(now).toISOString() };
}

export const isNodeReady = (node: V1Node | undefined): boolean =>
  node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export const bootIdOf = (node: V1Node | undefined): string | undefined => node?.status?.nodeInfo?.bootID || undefined;

/** A reboot happened once the node reports another bootID than when it started, and is Ready again. */
export function rebootObserved(status: NodeOpNodeStatus, node: V1Node | undefined): boolean {
  const bootNow = bootIdOf(node);
  return bootNow !== undefined && status.bootID !== undefined && bootNow !== status.bootID && isNodeReady(node);
}

/** The entry of a node that starts now: it holds a concurrency slot from here on. */
export function startedStatus(
  op: NodeOpView,
  jobName: string,
  node: V1Node | undefined,
  now: number,
): NodeOpNodeStatus {
  const at = new Date(now).toISOString();
  const bootID = bootIdOf(node);
  return {
    phase: 'Pending',
    jobName,
    message: 'starting',
    rebootStatus: op.plan ? 'pending' : 'not-requested',
    startedAt: at,
    ...(bootID ? { bootID } : {}),
    lastUpdated: at,
  };
}

/** "Job X created" and "Job X is running (pod … Pending/Running)": progress nobody acts on. */
const isRoutineProgress = (message: string | undefined): boolean =>
  /^Job \S+ (created|is running)\b/.test(message ?? '');

/**
 * A running node's entry, written only when it says something new: restarts (the Skyhook controller
 * turns them into the erroring state), a pod waiting on a stuck reason, a suspension, or the end of
 * one of those. Routine pod progress would be a status write per pod phase that nothing reads, so
 * the entry keeps "Job … created" until the Job finishes.
 */
export function runningStatus(
  status: NodeOpNodeStatus,
  message: string,
  restarts: number,
  now: number,
): NodeOpNodeStatus {
  const routine =
    restarts === (status.restarts ?? 0) && isRoutineProgress(message) && isRoutineProgress(status.message);
  return routine ? status : updated(status, { message, restarts }, now);
}

/** A JobRun's (or any) recheck as a NodeStep's fields. */
export function recheckOf(run: { recheckAt?: number; recheckReason?: string }): Partial<NodeStep> {
  return run.recheckAt === undefined ? {} : { recheckAt: run.recheckAt, recheckReason: run.recheckReason ?? '' };
}

/** The earlier of two rechecks. */
export function earlierRecheck(a: Partial<NodeStep>, b: Partial<NodeStep>): Partial<NodeStep> {
  if (a.recheckAt === undefined) return b;
  if (b.recheckAt === undefined) return a;
  return a.recheckAt <= b.recheckAt ? a : b;
}
