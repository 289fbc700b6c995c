/** The NodeOp's overall phase and conditions from its per-node statuses (pure). */
import type { Condition } from '../../api/k8s-schemas.js';
import { NODEOP_CONDITIONS } from '../../api/names.js';
import type { NodeOpNodeStatus, NodeOpPhase } from '../../api/nodeop.js';
import type { PacingDecision } from './pacing.js';

/** A node is done when its Job completed and any reboot it asked for happened. */
export const isNodeDone = (status: NodeOpNodeStatus | undefined): boolean =>
  status?.phase === 'Completed' && status.rebootStatus !== 'pending';

/** A node that will do nothing more but end again (node-end.ts `finish`): done, or failed. */
export const isNodeFinal = (status: NodeOpNodeStatus | undefined): boolean =>
  isNodeDone(status) || status?.phase === 'Failed';

/**
 * Failed if any node failed; Completed once every target and every node ever started is done;
 * Running once some node started; Pending before that (also while no node matches).
 */
export function aggregatePhase(targets: string[], statuses: Record<string, NodeOpNodeStatus>): NodeOpPhase {
  const entries = Object.values(statuses);
  if (entries.some((s) => s.phase === 'Failed')) return 'Failed';
  const nodes = new Set([...targets, ...Object.keys(statuses)]);
  if (nodes.size > 0 && [...nodes].every((node) => isNodeDone(statuses[node]))) return 'Completed';
  return entries.length > 0 ? 'Running' : 'Pending';
}

/**
 * Conditions that say why the NodeOp is not moving: stopped by a failure (stopOnFailure), or no
 * node to run on. `previous` keeps lastTransitionTime stable while a condition holds.
 */
export function nodeOpConditions(
  targets: string[],
  statuses: Record<string, NodeOpNodeStatus>,
  pacing: PacingDecision,
  previous: Condition[],
  now: string,
): Condition[] {
  const wanted: Omit<Condition, 'lastTransitionTime'>[] = [];
  if (pacing.stoppedBy !== undefined) {
    const failed = statuses[pacing.stoppedBy];
    const held = pacing.waiting.length > 0 ? `; not started: ${pacing.waiting.join(', ')}` : '';
    wanted.push({
      type: NODEOP_CONDITIONS.stoppedOnFailure,
      status: 'True',
      reason: 'NodeFailed',
      message: `stopOnFailure: node ${pacing.stoppedBy} failed (${failed?.message ?? 'no message'}), so no further node is started${held}`,
    });
  }
  if (targets.length === 0 && Object.keys(statuses).length === 0) {
    wanted.push({
      type: NODEOP_CONDITIONS.noMatchingNodes,
      status: 'True',
      reason: 'NoNodes',
      message: 'no node matches nodeSelector/targetNodes yet; nodes that start matching are processed',
    });
  }
  return wanted.map((c) => {
    const before = previous.find((p) => p.type === c.type && p.status === c.status);
    return { ...c, lastTransitionTime: before?.lastTransitionTime ?? now };
  });
}
