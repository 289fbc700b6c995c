/**
 * Batch strategies of a DeploymentPolicy compartment: how big the next batch is, and how a finished
 * batch is judged. State lives in the SCR's `compartmentStatuses[c].batchState` so a restarted
 * operator continues where it was. Zero fields are left out, as upstream's omitempty does.
 */
import type { CompartmentStatus } from '../../../api/skyhook.js';
import type { StrategyParams } from './compartments.js';

export type BatchState = NonNullable<CompartmentStatus['batchState']>;

export const INITIAL_BATCH_STATE: BatchState = { currentBatch: 1 };

/** Progress for the safety limit: nodes done either way, in percent of the compartment. */
export function progressPercent(completed: number, failed: number, total: number): number {
  return total === 0 ? 0 : Math.floor(((completed + failed) * 100) / total);
}

/**
 * The next batch's size: fixed keeps initialBatch; linear adds delta, exponential multiplies by
 * growthFactor; after a failed batch below the safety limit they shrink instead. Never more than
 * the nodes not yet done, never less than 1.
 */
export function nextBatchSize(strategy: StrategyParams, state: BatchState, total: number): number {
  const last = state.lastBatchSize ?? 0;
  const completed = state.completedNodes ?? 0;
  const failed = state.failedNodes ?? 0;
  const shrink = state.lastBatchFailed === true && progressPercent(completed, failed, total) < strategy.safetyLimit;
  let size: number;
  if (last === 0 || strategy.kind === 'fixed') size = strategy.initialBatch;
  else if (strategy.kind === 'linear') size = shrink ? Math.max(1, last - strategy.delta) : last + strategy.delta;
  else
    size = Math.min(
      total,
      shrink ? Math.max(1, Math.floor(last / strategy.growthFactor)) : last * strategy.growthFactor,
    );
  return Math.max(1, Math.min(size, total - completed - failed));
}

/**
 * Judges the batch that just ended from the compartment's counts against the checkpoints of the
 * last evaluation. Nothing changed (a batch of blocked nodes) → no verdict. A batch fails when its
 * success rate, completed / (completed + failed), is under batchThreshold; enough consecutive
 * failures below the safety limit stop the rollout. Counts that went down (nodes left the
 * compartment, a failed node recovered) move the checkpoints without a verdict.
 */
export function evaluateBatch(
  strategy: StrategyParams,
  state: BatchState,
  counts: { completed: number; failed: number; total: number },
): BatchState {
  const newlyCompleted = Math.max(0, counts.completed - (state.completedNodes ?? 0));
  const newlyFailed = Math.max(0, counts.failed - (state.failedNodes ?? 0));
  const checkpoints = { completedNodes: counts.completed, failedNodes: counts.failed };
  if (newlyCompleted + newlyFailed === 0) {
    return checkpoints.completedNodes === (state.completedNodes ?? 0) &&
      checkpoints.failedNodes === (state.failedNodes ?? 0)
      ? state
      : compact({ ...state, ...checkpoints });
  }
  const failedBatch = (newlyCompleted * 100) / (newlyCompleted + newlyFailed) < strategy.batchThreshold;
  const consecutiveFailures = failedBatch ? (state.consecutiveFailures ?? 0) + 1 : 0;
  const stop =
    failedBatch &&
    strategy.failureThreshold !== undefined &&
    progressPercent(counts.completed, counts.failed, counts.total) < strategy.safetyLimit &&
    consecutiveFailures >= strategy.failureThreshold;
  return compact({
    ...state,
    ...checkpoints,
    currentBatch: (state.currentBatch ?? 1) + 1,
    consecutiveFailures,
    shouldStop: state.shouldStop === true || stop,
    lastBatchFailed: failedBatch,
  });
}

/** Drops zero and false fields (upstream's omitempty), keeping currentBatch. */
export function compact(state: BatchState): BatchState {
  const out: BatchState = {};
  for (const [key, value] of Object.entries(state) as [keyof BatchState, number | boolean | undefined][]) {
    if (value === undefined || value === 0 || value === false) continue;
    (out as Record<string, number | boolean>)[key] = value;
  }
  return out;
}
