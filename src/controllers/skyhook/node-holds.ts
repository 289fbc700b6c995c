/**
 * Every wait made visible. Each node whose work for an SCR is held gets `waiting_<scr>` =
 * `<Reason>: <what holds it>` (the pods, taints, SCRs or budget), an Event when the reason starts,
 * and the SCR gets newer upstream's conditions: `Blocked` (NonInterruptPodsRunning) and
 * `DrainBlocked` naming the pods. Drain blockers are also kept per node in `drainBlocked_<scr>`.
 */
import { nodeAnnotations, SKYHOOK_CONDITIONS } from '../../api/names.js';
import { drainBlockedCondition, nonInterruptBlockedMessage } from './drain-settings.js';
import type { DrainBlocker, NodeView, PlannerEvent, SetNodeAnnotations } from './planner-types.js';
import type { ConditionValue } from './skyhook-status.js';

export interface NodeHold {
  reason: string;
  detail: string;
}

export interface NodeHoldReport {
  node: NodeView;
  hold?: NodeHold;
  drainBlockers: DrainBlocker[];
}

/** Reasons worth an Event when they start (the others are routine: budget, cordoning, merging). */
const NOTIFIED: Readonly<Record<string, 'Normal' | 'Warning'>> = {
  NonInterruptPodsRunning: 'Warning',
  DrainBlocked: 'Warning',
  TaintNotTolerable: 'Warning',
  RolloutStopped: 'Warning',
  HigherPrioritySkyhook: 'Normal',
  DeploymentPolicyNotFound: 'Warning',
};

export function holdAnnotations(skyhook: string, reports: NodeHoldReport[]): { actions: SetNodeAnnotations[]; events: PlannerEvent[] } {
  const actions: SetNodeAnnotations[] = [];
  const events: PlannerEvent[] = [];
  for (const { node, hold, drainBlockers } of reports) {
    const waitingKey = nodeAnnotations.waiting(skyhook);
    const blockedKey = nodeAnnotations.drainBlocked(skyhook);
    const waiting = hold ? `${hold.reason}: ${hold.detail}` : undefined;
    const blocked = drainBlockers.length > 0 ? JSON.stringify(drainBlockers) : undefined;
    const patch: Record<string, string | null> = {};
    if (node.annotations[waitingKey] !== waiting) patch[waitingKey] = waiting ?? null;
    if (node.annotations[blockedKey] !== blocked) patch[blockedKey] = blocked ?? null;
    if (Object.keys(patch).length > 0) actions.push({ kind: 'setNodeAnnotations', node: node.name, annotations: patch });
    const before = node.annotations[waitingKey];
    if (hold && waiting !== before && NOTIFIED[hold.reason] && !before?.startsWith(`${hold.reason}:`)) {
      events.push({ kind: 'event', involved: { kind: 'Node', name: node.name }, type: NOTIFIED[hold.reason]!, reason: hold.reason, message: `Skyhook [${skyhook}] waits: ${hold.detail}` });
      if (hold.reason === 'NonInterruptPodsRunning') {
        events.push({ kind: 'event', involved: { kind: 'Skyhook', name: skyhook }, type: 'Warning', reason: 'Drain', message: `node [${node.name}] interrupt held by non-interrupt pods: ${hold.detail}` });
      }
    }
  }
  return { actions, events };
}

/** Conditions to set and types to remove on the SCR for the holds of this pass. */
export function holdConditions(reports: NodeHoldReport[], targeted: number): { wanted: ConditionValue[]; remove: string[] } {
  const wanted: ConditionValue[] = [];
  const remove: string[] = [];
  const byPods = reports.filter((r) => r.hold?.reason === 'NonInterruptPodsRunning').map((r) => r.node.name);
  if (byPods.length > 0) {
    wanted.push({ type: SKYHOOK_CONDITIONS.blocked, status: 'True', reason: 'NonInterruptPodsRunning', message: nonInterruptBlockedMessage(byPods) });
  } else remove.push(SKYHOOK_CONDITIONS.blocked);
  const drain = drainBlockedCondition(Object.fromEntries(reports.map((r) => [r.node.name, r.drainBlockers])), targeted);
  if (drain) wanted.push({ type: SKYHOOK_CONDITIONS.drainBlocked, status: 'True', ...drain });
  else remove.push(SKYHOOK_CONDITIONS.drainBlocked);
  return { wanted, remove };
}
