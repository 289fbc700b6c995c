/**
 * What a NodeOp reconcile writes to the NodeOp's status, and when (issue 18: every status write is an
 * API write, and wakes every watcher of NodeOps). Pure, apart from `HeldEntries`, the memory of the
 * entries held back.
 *
 * Only changed node entries are sent (a merge patch leaves the others as they are), with the phase and
 * conditions they make. A NodeOp whose creator follows its progress itself (`eventVerbosity: Quiet`,
 * the Skyhook controller's stage NodeOps) does not get a node's routine "Running: Job … created"
 * entry written for the first RUNNING_WRITE_DELAY_MS of the Job: most stage Jobs end sooner, and
 * their entry then goes straight to Completed or Failed, one write instead of two. Meanwhile the
 * entry is kept in this process's memory and read back into the next reconcile as if written, so
 * pacing, the Job's follow-up (a deleted Job still fails the node) and the stage metrics work as
 * before; after a restart the node is found again by its Job's deterministic name, as after a crash
 * between the Job's creation and the status write. What people see meanwhile: the Job and its pod
 * at once; the NodeOp without the node's entry (a new NodeOp: no status yet, `kubectl get nodeop`
 * shows no phase) until the Job ends or the delay passes. Anything that is not routine (restarts, a
 * stuck pod, suspension, a failure) is written at once.
 */
import type { NodeOp, NodeOpNodeStatus, NodeOpStatus } from '../../api/nodeop.js';
import { aggregatePhase, nodeOpConditions } from './aggregate.js';
import type { PacingDecision } from './pacing.js';

/** How long a Quiet NodeOp's node may run its Job before its Running entry is written. */
export const RUNNING_WRITE_DELAY_MS = 10_000;

const ROUTINE_START = /^Job \S+ created$/;

/** A node's entry that may stay unwritten for now (see the header). */
export function isHeldBack(
  nodeOp: Pick<NodeOp, 'spec'>,
  written: NodeOpNodeStatus | undefined,
  entry: NodeOpNodeStatus,
  now: number,
): boolean {
  if (nodeOp.spec.eventVerbosity !== 'Quiet' || written !== undefined) return false;
  if (entry.phase !== 'Running' || (entry.restarts ?? 0) !== 0 || !ROUTINE_START.test(entry.message ?? ''))
    return false;
  const startedAt = Date.parse(entry.startedAt ?? '');
  return Number.isFinite(startedAt) && now < startedAt + RUNNING_WRITE_DELAY_MS;
}

export interface StatusWriteInput {
  /** The NodeOp as read: its status is what is written so far. */
  nodeOp: NodeOp;
  targets: string[];
  pacing: PacingDecision;
  /** Every node's entry after this reconcile. */
  statuses: Record<string, NodeOpNodeStatus>;
  now: number;
}

export interface StatusWrite {
  /** The merge patch of `status`; undefined when the status says all of it already. */
  patch?: NodeOpStatus;
  /** Entries not written yet (held back), by node. */
  held: Record<string, NodeOpNodeStatus>;
  /** When the earliest held entry is due to be written (ms since the epoch). */
  writeAt?: number;
}

export function planStatusWrite({ nodeOp, targets, pacing, statuses, now }: StatusWriteInput): StatusWrite {
  const previous = nodeOp.status ?? {};
  const written = previous.nodeStatuses ?? {};
  const held: Record<string, NodeOpNodeStatus> = {};
  const shown: Record<string, NodeOpNodeStatus> = {};
  for (const [node, entry] of Object.entries(statuses)) {
    if (isHeldBack(nodeOp, written[node], entry, now)) held[node] = entry;
    else shown[node] = entry;
  }
  // Phase and conditions of what the status will show, so a held entry does not show through them.
  const phase = aggregatePhase(targets, shown);
  const conditions = nodeOpConditions(targets, shown, pacing, previous.conditions ?? [], new Date(now).toISOString());
  const changedNodes = Object.fromEntries(
    Object.entries(shown).filter(([node, s]) => JSON.stringify(s) !== JSON.stringify(written[node])),
  );
  const generation = nodeOp.metadata.generation;
  const nodesChanged = Object.keys(changedNodes).length > 0;
  const unchanged =
    !nodesChanged &&
    previous.phase === phase &&
    JSON.stringify(previous.conditions ?? []) === JSON.stringify(conditions) &&
    previous.observedGeneration === generation;
  const dues = Object.values(held).map((entry) => Date.parse(entry.startedAt ?? '') + RUNNING_WRITE_DELAY_MS);
  const timing = dues.length > 0 ? { writeAt: Math.min(...dues) } : {};
  // With entries held back and no entry to write, the rest (the first `Pending`, a new
  // observedGeneration) waits for the write that comes with them: at most RUNNING_WRITE_DELAY_MS.
  if (unchanged || (!nodesChanged && dues.length > 0)) return { held, ...timing };
  const patch: NodeOpStatus = {
    phase,
    conditions,
    ...(nodesChanged ? { nodeStatuses: changedNodes } : {}),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastUpdated: new Date(now).toISOString(),
  };
  return { patch, held, ...timing };
}

/** The entries this process holds back, per NodeOp key (and uid: a NodeOp made again by name starts afresh). */
export class HeldEntries {
  private readonly byKey = new Map<string, { uid: string; entries: Record<string, NodeOpNodeStatus> }>();

  /** The NodeOp's written node entries, with the held ones it lacks (a written entry wins). */
  withHeld(key: string, nodeOp: NodeOp): Record<string, NodeOpNodeStatus> {
    const written = nodeOp.status?.nodeStatuses ?? {};
    const held = this.byKey.get(key);
    if (held === undefined || held.uid !== (nodeOp.metadata.uid ?? '')) return written;
    return { ...held.entries, ...written };
  }

  remember(key: string, nodeOp: NodeOp, entries: Record<string, NodeOpNodeStatus>): void {
    if (Object.keys(entries).length === 0) this.byKey.delete(key);
    else this.byKey.set(key, { uid: nodeOp.metadata.uid ?? '', entries });
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }
}
