/**
 * Planning one SCR, as a pipeline of phases over one pass (skyhook-pass.ts): bring every targeted
 * node's record up to date (op outcomes, version changes, config cycles), decide each node's status,
 * admit nodes within the budget, start their next stages, expire finished ops, release cordons,
 * report holds, write node state and status back, and derive the SCR status. Each phase returns
 * what it decided; the actions come out in the crash-safe steps of `orderSteps` (action-order.ts).
 */
import type { NodeState, SkyhookStatusValue } from '../../../api/node-state.js';
import { orderSteps } from './action-order.js';
import { gateAnnotationWrites } from './health-gate-plan.js';
import { admit, advanceAdmittedNodes, earliest, expireFinishedOps } from './pass-advance.js';
import { decideStatuses, refreshNodes, runConfigCycles, untargetedOpDeletes } from './pass-nodes.js';
import { scrStatus } from './pass-status.js';
import { failureReports, keptPriority, releaseCordons, reportHolds, suspendOps, writeBack } from './pass-writeback.js';
import type { PlannerAction } from './planner-types.js';
import { skyhookPass, type SkyhookPlanInput } from './skyhook-pass.js';
import { resetsBatchState } from './rollout-plan.js';

export type { SkyhookPlanInput } from './skyhook-pass.js';

export interface SkyhookPlan {
  /** Cut into the crash-safe steps of action-order.ts. */
  steps: PlannerAction[][];
  nodeStatus: Record<string, SkyhookStatusValue>;
  /** Every node's package states, whole (the status may list fewer: status-size.ts); planned SCRs only. */
  nodeState?: Record<string, NodeState>;
  requeueAfterMs?: number;
}

/**
 * Which targeted nodes the SCR has complete, without planning it: what a later SCR's priority gate
 * and the runtime-required taint need of an earlier one. Only the per-node phases run (cached:
 * plan-cache.ts); later phases never make a node complete nor take that away (only `waiting` nodes
 * are admitted, and they become in_progress or erroring), so the complete nodes are a full plan's.
 * Not for a run with cluster budgets: there every SCR's admission draws on the shared ledger.
 */
export function skyhookCompletion(input: SkyhookPlanInput): Record<string, SkyhookStatusValue> {
  const pass = skyhookPass(input);
  return decideStatuses(pass, runConfigCycles(pass, refreshNodes(pass))).nodeStatus;
}

export function planSkyhook(input: SkyhookPlanInput): SkyhookPlan {
  const pass = skyhookPass(input);
  const refreshed = refreshNodes(pass);
  const cycles = runConfigCycles(pass, refreshed);
  const decided = decideStatuses(pass, cycles);
  const admission = admit(
    pass,
    decided,
    cycles.configUpdates,
    refreshed.versionChanged && resetsBatchState(pass.spec, pass.policy?.spec),
  );
  const advanced = advanceAdmittedNodes(pass, decided, admission, cycles.configUpdates);
  const expired = expireFinishedOps(pass, advanced.works);
  const { works } = expired;
  const { nodeStatus } = advanced;
  const holds = reportHolds(pass, works, nodeStatus, advanced.holds, advanced.drainBlockers, admission.podHolds);
  const written = writeBack(pass, works, nodeStatus, [...refreshed.events, ...holds.events], decided.gates);
  const status = scrStatus(pass, {
    works,
    nodeStatus,
    priority: keptPriority(pass, advanced.priority, nodeStatus),
    configUpdates: cycles.configUpdates,
    versionChanged: refreshed.versionChanged,
    creates: advanced.creates,
    holdReports: holds.reports,
    rollout: admission.rollout,
    ...(advanced.windowOpensAt !== undefined ? { windowOpensAt: advanced.windowOpensAt } : {}),
  });
  const steps = orderSteps({
    failureReports: failureReports(works),
    configMaps: cycles.upserts,
    nodeWrites: written.nodeWrites,
    cordonReleases: releaseCordons(pass, nodeStatus, decided.gates),
    slotTakers: written.slotTakers,
    nodeMetadata: [
      ...advanced.cordons,
      ...holds.actions,
      ...gateAnnotationWrites(pass.name, pass.targeted, decided.gates),
    ],
    deletes: [...untargetedOpDeletes(pass), ...cycles.deletes, ...advanced.deletes, ...expired.deletes],
    suspends: suspendOps(pass),
    creates: advanced.creates,
    ...(status.action ? { status: status.action } : {}),
    events: [...written.events, ...status.events],
  });
  const requeueAfterMs = earliest(earliest(advanced.requeueAfterMs, expired.requeueAfterMs), holds.requeueAfterMs);
  const plan: SkyhookPlan = { steps, nodeStatus, nodeState: status.nodeState };
  if (requeueAfterMs !== undefined) plan.requeueAfterMs = requeueAfterMs;
  return plan;
}
