/**
 * The last phase of a pass (plan-skyhook.ts): the SCR's status from what the pass decided for its
 * nodes, and the Event of its transition.
 */
import type { NodeState, SkyhookStatusValue } from '../../../api/node-state.js';
import { inputWarningCondition, inputWarnings } from './input-warnings.js';
import { nextWindowTimestamp } from './maintenance-windows.js';
import { firstRefusalReason } from './package-trust.js';
import { holdConditions, type NodeHoldReport } from './node-holds.js';
import type { NodeWork } from './node-work.js';
import type { CreateStageOp, PlannerEvent, SetSkyhookStatus } from './planner-types.js';
import { compartmentStatuses, resetsBatchState, type RolloutPlan } from './rollout-plan.js';
import { blockedReason, type SkyhookPass } from './skyhook-pass.js';
import { skyhookStatusUpdate } from './skyhook-status-update.js';

export interface PassOutcome {
  works: NodeWork[];
  nodeStatus: Record<string, SkyhookStatusValue>;
  priority: Record<string, string>;
  configUpdates: Record<string, string[]>;
  versionChanged: boolean;
  creates: CreateStageOp[];
  holdReports: NodeHoldReport[];
  rollout: RolloutPlan;
  /** The next maintenance window opening, while nodes wait for one. */
  windowOpensAt?: number;
}

export function scrStatus(
  pass: SkyhookPass,
  outcome: PassOutcome,
): { action?: SetSkyhookStatus; events: PlannerEvent[]; nodeState: Record<string, NodeState> } {
  const { scr, name, spec, policy } = pass;
  const { works, nodeStatus } = outcome;
  const becameComplete =
    Object.values(nodeStatus).every((status) => status === 'complete') && scr.status?.status !== 'complete';
  const namesOf = (reason: ReturnType<typeof blockedReason>): string[] =>
    works.filter((work) => blockedReason(pass, work) === reason).map((work) => work.node.name);
  const nodeState = Object.fromEntries(
    works
      .filter((work) => !work.record.malformed && Object.keys(work.state).length > 0)
      .map((work) => [work.node.name, work.state]),
  );
  const update = skyhookStatusUpdate({
    skyhook: scr,
    now: pass.now,
    nodeStatus,
    nodeState,
    nodePriority: outcome.priority,
    configUpdates: outcome.configUpdates,
    paused: pass.paused,
    disabled: pass.disabled,
    problems: pass.problems,
    malformedNodes: works.filter((work) => work.record.malformed).map((work) => work.node.name),
    ignoredNodes: namesOf('ignored'),
    untoleratedNodes: namesOf('taint'),
    lastCreated: outcome.creates.at(-1),
    ...(pass.missingPolicy !== undefined ? { missingPolicy: pass.missingPolicy } : {}),
    ...(pass.trustRefusals.length > 0
      ? { trustRefusal: { reason: firstRefusalReason(pass.trust) ?? 'Unsigned', refusals: pass.trustRefusals } }
      : {}),
    holdConditions: holdConditions(outcome.holdReports, pass.targeted.length),
    ...(outcome.windowOpensAt !== undefined
      ? { nextMaintenanceWindow: nextWindowTimestamp(outcome.windowOpensAt) }
      : {}),
    inputWarning: inputWarningCondition(
      inputWarnings({
        skyhook: scr,
        skyhooks: pass.skyhooks ?? [scr],
        targeted: pass.targeted,
        compartments: outcome.rollout.compartments,
        ...(policy ? { policy } : {}),
        ...(pass.cache ? { cache: pass.cache } : {}),
      }),
    ),
    compartmentStatuses: compartmentStatuses(
      outcome.rollout,
      nodeStatus,
      // A version change's reset is done before admission (pass-advance.ts admit), so this pass's batch counts.
      resetsBatchState(spec, policy?.spec) && becameComplete,
    ),
  });
  const action: SetSkyhookStatus | undefined = update.status
    ? { kind: 'setSkyhookStatus', skyhook: name, status: update.status }
    : undefined;
  return action ? { action, events: update.events, nodeState } : { events: update.events, nodeState };
}
