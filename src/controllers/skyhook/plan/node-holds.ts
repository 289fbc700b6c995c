/**
 * Every wait made visible. Each node whose work for an SCR is held gets `waiting_<scr>` =
 * `<Reason>: <what holds it>` (the pods, taints, SCRs or budget), an Event when a reason worth
 * one starts (not routine ordering, budget or merging: the annotation and the SCR's status show those),
 * and the SCR gets newer upstream's conditions: `Blocked` (NonInterruptPodsRunning, or
 * NonInterruptWaitLong once a node's wait passes `podNonInterruptWarnAfter`) and `DrainBlocked`
 * naming the pods. Drain blockers are also kept per node in `drainBlocked_<scr>`, and the start of a
 * wait for non-interruptible pods in `nonInterruptWaitSince_<scr>` (non-interrupt-wait.ts).
 */
import { nodeAnnotations, SKYHOOK_CONDITIONS } from '../../../api/names.js';
import type { NodeStateMalformedError } from '../../../api/node-state.js';
import { drainBlockedCondition, nonInterruptBlockedMessage } from './drain-settings.js';
import type { DrainBlocker, NodeView, PlannerEvent, SetNodeAnnotations } from './planner-types.js';
import type { ConditionValue } from './skyhook-status.js';

export interface NodeHold {
  reason: string;
  detail: string;
}

/** The hold of a node whose interrupt non-interruptible pods hold. */
export const POD_WAIT = 'NonInterruptPodsRunning';
/** The same hold once it has lasted longer than `podNonInterruptWarnAfter` (report-only). */
export const POD_WAIT_LONG = 'NonInterruptWaitLong';

export const isPodWait = (reason: string | undefined): boolean => reason === POD_WAIT || reason === POD_WAIT_LONG;

export interface NodeHoldReport {
  node: NodeView;
  hold?: NodeHold;
  drainBlockers: DrainBlocker[];
  /** Since when non-interruptible pods hold the node (RFC3339), while they do. */
  podWaitSince?: string;
}

/** A node waiting for SCRs before this one (priority, then name): ordering, not a problem. */
export const PRIORITY_WAIT = 'HigherPrioritySkyhook';

/**
 * Reasons worth an Event when they start. The others are routine: budget, cordoning, merging, and
 * priority ordering (HigherPrioritySkyhook: with several SCRs over the same nodes nearly every node
 * waits so, once per SCR; the node's `waiting_<scr>` annotation and the SCR's status show it).
 */
const NOTIFIED: Readonly<Record<string, 'Normal' | 'Warning'>> = {
  NonInterruptPodsRunning: 'Warning',
  NonInterruptWaitLong: 'Warning',
  DrainBlocked: 'Warning',
  TaintNotTolerable: 'Warning',
  RolloutStopped: 'Warning',
  DeploymentPolicyNotFound: 'Warning',
  NodeStateMalformed: 'Warning',
  OutsideMaintenanceWindow: 'Normal',
  ClusterBudget: 'Normal',
  HealthGate: 'Normal',
  HealthGateTimedOut: 'Warning',
};

const MAX_PARSE_DETAIL = 200;

/**
 * A node whose `nodeState_<scr>` cannot be parsed: held, with the parse error and the fix. The
 * annotation is never rewritten by us (it may be a person's half-done edit, or another version's).
 */
export function malformedHold(skyhook: string, error: NodeStateMalformedError): NodeHold {
  const detail = error.detail.length > MAX_PARSE_DETAIL ? `${error.detail.slice(0, MAX_PARSE_DETAIL)}…` : error.detail;
  return {
    reason: 'NodeStateMalformed',
    detail: `annotation ${nodeAnnotations.nodeState(skyhook)} cannot be parsed (${detail}); fix it, or delete it to re-run this Skyhook's packages on the node`,
  };
}

const PRIORITY_PREFIX = `${PRIORITY_WAIT}: `;

/**
 * The `waiting_<scr>` value for a hold. A priority wait names the SCRs that held the node when the
 * wait began and is not rewritten as each of them finishes there: while every SCR still holding
 * it is one the annotation names, the annotation stands (one node write per wait, not one per
 * higher-priority SCR finishing: with 5 SCRs that was 6 more writes per node). A new blocker (an
 * SCR added or moved ahead) rewrites it; the SCRs' status says which are complete on the node.
 */
function waitingValue(hold: NodeHold | undefined, before: string | undefined): string | undefined {
  if (!hold) return undefined;
  const waiting = `${hold.reason}: ${hold.detail}`;
  if (hold.reason !== PRIORITY_WAIT || before === undefined || before === waiting) return waiting;
  if (!before.startsWith(PRIORITY_PREFIX)) return waiting;
  const named = new Set(before.slice(PRIORITY_PREFIX.length).split(', '));
  return hold.detail.split(', ').every((blocker) => named.has(blocker)) ? before : waiting;
}

export function holdAnnotations(
  skyhook: string,
  reports: NodeHoldReport[],
): { actions: SetNodeAnnotations[]; events: PlannerEvent[] } {
  const actions: SetNodeAnnotations[] = [];
  const events: PlannerEvent[] = [];
  const waitingKey = nodeAnnotations.waiting(skyhook);
  const blockedKey = nodeAnnotations.drainBlocked(skyhook);
  const sinceKey = nodeAnnotations.nonInterruptWaitSince(skyhook);
  for (const { node, hold, drainBlockers, podWaitSince } of reports) {
    const waiting = waitingValue(hold, node.annotations[waitingKey]);
    const blocked = drainBlockers.length > 0 ? JSON.stringify(drainBlockers) : undefined;
    const waitingChanged = node.annotations[waitingKey] !== waiting;
    const blockedChanged = node.annotations[blockedKey] !== blocked;
    const sinceChanged = node.annotations[sinceKey] !== podWaitSince;
    // A patch object only for nodes that need one: this runs for every node on every pass.
    if (waitingChanged || blockedChanged || sinceChanged) {
      const patch: Record<string, string | null> = {};
      if (waitingChanged) patch[waitingKey] = waiting ?? null;
      if (blockedChanged) patch[blockedKey] = blocked ?? null;
      if (sinceChanged) patch[sinceKey] = podWaitSince ?? null;
      actions.push({ kind: 'setNodeAnnotations', node: node.name, annotations: patch });
    }
    const before = node.annotations[waitingKey];
    if (hold && waiting !== before && NOTIFIED[hold.reason] && !before?.startsWith(`${hold.reason}:`)) {
      events.push({
        kind: 'event',
        involved: { kind: 'Node', name: node.name },
        type: NOTIFIED[hold.reason]!,
        reason: hold.reason,
        message: `Skyhook [${skyhook}] waits: ${hold.detail}`,
      });
      if (hold.reason === POD_WAIT) {
        events.push({
          kind: 'event',
          involved: { kind: 'Skyhook', name: skyhook },
          type: 'Warning',
          reason: 'Drain',
          message: `node [${node.name}] interrupt held by non-interrupt pods: ${hold.detail}`,
        });
      }
      if (hold.reason === POD_WAIT_LONG) {
        events.push({
          kind: 'event',
          involved: { kind: 'Skyhook', name: skyhook },
          type: 'Warning',
          reason: POD_WAIT_LONG,
          message: `node [${node.name}] interrupt held by non-interrupt pods: ${hold.detail}`,
        });
      }
    }
  }
  return { actions, events };
}

/** Conditions to set and types to remove on the SCR for the holds of this pass. */
export function holdConditions(
  reports: NodeHoldReport[],
  targeted: number,
): { wanted: ConditionValue[]; remove: string[] } {
  const wanted: ConditionValue[] = [];
  const remove: string[] = [];
  const byPods = reports.filter((r) => isPodWait(r.hold?.reason)).map((r) => r.node.name);
  const long = reports.filter((r) => r.hold?.reason === POD_WAIT_LONG).map((r) => r.node.name);
  if (byPods.length > 0) {
    wanted.push({
      type: SKYHOOK_CONDITIONS.blocked,
      status: 'True',
      // A wait past podNonInterruptWarnAfter is what an alert on the condition should see.
      reason: long.length > 0 ? POD_WAIT_LONG : POD_WAIT,
      message: nonInterruptBlockedMessage(byPods, long),
    });
  } else remove.push(SKYHOOK_CONDITIONS.blocked);
  const byWindow = reports.filter((r) => r.hold?.reason === 'OutsideMaintenanceWindow');
  if (byWindow.length > 0) {
    wanted.push({
      type: SKYHOOK_CONDITIONS.maintenanceWindow,
      status: 'True',
      reason: 'OutsideMaintenanceWindow',
      message: `${byWindow.length} node(s) wait: ${byWindow[0]!.hold!.detail}`,
    });
  } else remove.push(SKYHOOK_CONDITIONS.maintenanceWindow);
  // Only the nodes with blockers: a record of every targeted node, made on every pass, was pure garbage.
  const blocked = reports.filter((r) => r.drainBlockers.length > 0);
  const drain = drainBlockedCondition(Object.fromEntries(blocked.map((r) => [r.node.name, r.drainBlockers])), targeted);
  if (drain) wanted.push({ type: SKYHOOK_CONDITIONS.drainBlocked, status: 'True', ...drain });
  else remove.push(SKYHOOK_CONDITIONS.drainBlocked);
  return { wanted, remove };
}
