/**
 * Which nodes of one compartment may work this pass. Without a strategy: a sliding window of
 * `ceiling` nodes (nodes already at work first). With one: batches; while any node of the current
 * batch is still at work nothing new starts; when the batch is over it is judged, and the next one
 * is picked (fresh nodes before failed ones, oldest first) with the strategy's size. Either way the
 * ceiling is a hard cap on nodes at work, counting nodes that still hold this SCR's cordon: upstream
 * lets a strategy's batch outgrow the budget, we do not.
 */
import type { CompartmentStatus } from '../../../api/skyhook.js';
import { compact, evaluateBatch, INITIAL_BATCH_STATE, nextBatchSize, type BatchState } from './batch-strategy.js';
import type { Compartment } from './compartments.js';
import type { SkyhookStatusValue } from '../../../api/node-state.js';
import { admitNodes } from './rollout.js';

export interface RolloutNode {
  node: string;
  /** A stage op of this SCR is running there. */
  busy: boolean;
  /** The node still carries this SCR's cordon claim and is not complete: it is interrupted. */
  holdsCordon: boolean;
  /** Eligible, not complete, not held by an earlier SCR. */
  ready: boolean;
  /** Started earlier and not finished (nodePriority entry, or persisted in_progress/erroring status). */
  sticky: boolean;
  complete: boolean;
  /** A package is erroring there, or a health gate timed out. */
  failed: boolean;
  /** Packages done, waiting on a health gate: it keeps its slot (health-gate-plan.ts). */
  gating?: boolean;
  /**
   * Non-interruptible pods hold its next step and nothing of this SCR runs there
   * (non-interrupt-wait.ts): it takes a slot only when no node that can proceed wants it, and does
   * not keep a batch open. Holding this SCR's cordon it still counts against the ceiling.
   */
  waitsForPods: boolean;
}

export interface CompartmentAdmission {
  admitted: string[];
  /** The compartment's batch state after this pass (strategies only). */
  batchState?: BatchState;
  /** A failureThreshold stopped the compartment. */
  stopped: boolean;
}

export function admitCompartment(
  compartment: Compartment,
  nodes: RolloutNode[],
  previous: BatchState | undefined,
): CompartmentAdmission {
  if (compartment.strategy === undefined) {
    const candidates = nodes.map((n) => ({
      node: n.node,
      busy: n.busy || n.holdsCordon || n.gating === true,
      ready: n.ready,
      sticky: n.sticky,
      waitsForPods: n.waitsForPods,
    }));
    return { admitted: [...admitNodes(candidates, compartment.ceiling)], stopped: false };
  }
  const strategy = compartment.strategy;
  let state = compact(previous ?? INITIAL_BATCH_STATE);
  // Cordoned for this SCR and waiting for its pods: still admitted (and counted in `held` below),
  // but out of the batch, so the batch ends when its other nodes do.
  const parked = nodes.filter((n) => n.waitsForPods && n.holdsCordon && n.ready && !n.complete).map((n) => n.node);
  const inBatch = nodes.filter(
    (n) => !n.complete && !n.waitsForPods && (n.busy || ((n.sticky || n.gating === true) && !n.failed)),
  );
  if (inBatch.length > 0)
    return {
      admitted: [...inBatch.filter((n) => n.ready).map((n) => n.node), ...parked],
      batchState: state,
      stopped: state.shouldStop === true,
    };

  const counts = {
    completed: nodes.filter((n) => n.complete).length,
    failed: nodes.filter((n) => !n.complete && n.failed).length,
    total: nodes.length,
  };
  state =
    (state.lastBatchSize ?? 0) > 0
      ? evaluateBatch(strategy, state, counts)
      : compact({ ...state, completedNodes: counts.completed, failedNodes: counts.failed });
  if (state.shouldStop === true) return { admitted: parked, batchState: state, stopped: true };
  const held = nodes.filter((n) => n.holdsCordon).length;
  const size = Math.min(nextBatchSize(strategy, state, counts.total), Math.max(0, compartment.ceiling - held));
  const candidates = nodes.filter((n) => n.ready && !n.complete && !parked.includes(n.node));
  // Nodes that can proceed first; those held by non-interruptible pods only fill what is left.
  const picked = [false, true]
    .flatMap((waits) => {
      const group = candidates.filter((n) => n.waitsForPods === waits);
      return [...group.filter((n) => !n.failed), ...group.filter((n) => n.failed)];
    })
    .slice(0, size)
    .map((n) => n.node);
  if (picked.length > 0) state = compact({ ...state, lastBatchSize: picked.length });
  return { admitted: [...picked, ...parked], batchState: state, stopped: false };
}

/** The compartment's entry in `status.compartmentStatuses`, from the node statuses of this pass. */
export function compartmentStatus(
  compartment: Compartment,
  nodeStatus: Record<string, SkyhookStatusValue>,
  batchState: BatchState | undefined,
): CompartmentStatus {
  const matched = compartment.nodes.length;
  const completed = compartment.nodes.filter((node) => nodeStatus[node] === 'complete').length;
  const status: CompartmentStatus = {
    matched,
    ceiling: compartment.ceiling,
    inProgress: compartment.nodes.filter((node) => nodeStatus[node] === 'in_progress').length,
    completed,
    progressPercent: matched === 0 ? 0 : Math.floor((completed * 100) / matched),
  };
  if (compartment.strategy !== undefined && batchState !== undefined) status.batchState = batchState;
  return status;
}
