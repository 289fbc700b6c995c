/**
 * The Skyhook planner: a pure function from a snapshot of the cluster (SCRs, nodes, stage ops, time)
 * to the actions that move every SCR forward. SCRs are planned in upstream's order (priority, then
 * name) and a node works on one SCR at a time: a later SCR waits on a node until every earlier,
 * non-disabled SCR is complete there (and, with `sequencing: all`, complete everywhere).
 */
import { SKYHOOK_ANNOTATIONS } from '../../../api/names.js';
import type { Skyhook } from '../../../api/skyhook.js';
import { type NodeState, readNodeSkyhookRecord, type SkyhookStatusValue } from '../../../api/node-state.js';
import { planAutoTaints, planRuntimeRequiredRelease } from './runtime-required.js';
import { PriorityGates } from './priority-gates.js';
import { planSkyhook, skyhookCompletion, type SkyhookPlan } from './plan-skyhook.js';
import { OpIndex } from './op-index.js';
import { PlanCacheRun, type PlanCache } from './plan-cache.js';
import { DEFAULT_PLANNER_SETTINGS, type PlannerAction, type PlannerInput, type PlanResult } from './planner-types.js';
import { nameOf } from '../../../api/object-meta.js';
import { DisruptionLedger } from '../../disruption/budget-rules.js';
import { compareText } from '../../../util/compare.js';

/**
 * A run's input with the cache of incremental planning (plan-cache.ts): what the previous run
 * returned, or `emptyPlanCache()` at first. Per-node results are reused where their inputs are
 * unchanged, and SCRs before `only` give only their complete nodes. Without a cache everything is
 * planned afresh; the actions are the same (planner.property.test.ts).
 */
export interface PlanRunInput extends PlannerInput {
  cache?: PlanCache;
}

/** With an input cache, the cache to pass to the next run (the caller keeps it; the planner keeps no state). */
export interface PlanRunResult extends PlanResult {
  cache?: PlanCache;
  /** With `only`: that SCR's package states on every node, whole (its metrics count them; the status may list fewer). */
  nodeState?: Record<string, NodeState>;
}

export function planNextActions(input: PlanRunInput): PlanRunResult {
  const settings = { ...DEFAULT_PLANNER_SETTINGS, ...input.settings };
  const gates = new PriorityGates();
  // Actions no bucket of action-order.ts claims (the runtime-required taints) are steps of their own.
  const steps: PlannerAction[][] = [];
  const alone = (actions: PlannerAction[]): void => {
    for (const action of actions) steps.push([action]);
  };
  let requeueAfterMs: number | undefined;
  let onlyNodeState: Record<string, NodeState> | undefined;
  const scrs = input.skyhooks.map((entry) => entry.skyhook);
  const wantedScrs = scrs.filter((scr) => input.only === undefined || scr.metadata.name === input.only);
  // Tainted now, worked on from the next pass (the taint must be in place before workloads land).
  alone(planAutoTaints(wantedScrs, input.nodes, settings.runtimeRequiredTaint));
  const planned = new Map<string, Record<string, SkyhookStatusValue>>();
  // One ledger for the whole run: SCRs draw cluster-budget slots from it in priority order.
  const ledger = new DisruptionLedger(input.disruptionBudgets ?? [], input.nodes);
  const opIndex = new OpIndex(input.stageOps);
  // With a cache (even an empty one) the run is incremental; without one, everything is planned afresh.
  const caches = input.cache ? new PlanCacheRun(input.cache) : undefined;
  for (const skyhook of [...input.skyhooks].sort((a, b) => comparePriority(a.skyhook, b.skyhook))) {
    const name = nameOf(skyhook.skyhook);
    const skyhookInput = {
      skyhook,
      nodes: input.nodes,
      stageOps: input.stageOps,
      now: input.now,
      settings,
      gates,
      skyhooks: scrs,
      ledger,
      ...(input.disruptionBudgets ? { budgets: input.disruptionBudgets } : {}),
      ...(input.deploymentPolicies ? { policies: input.deploymentPolicies } : {}),
      ...(input.healthGates ? { healthGates: input.healthGates } : {}),
      ...(input.packageTrust?.[name] ? { trust: input.packageTrust[name] } : {}),
      opIndex,
      ...(caches ? { caches } : {}),
    };
    // An SCR before `only` gives only which nodes it has complete, unless cluster budgets share slots.
    const plan: SkyhookPlan =
      caches !== undefined && input.only !== undefined && input.only !== name && ledger.empty
        ? { steps: [], nodeStatus: skyhookCompletion(skyhookInput) }
        : planSkyhook(skyhookInput);
    planned.set(name, plan.nodeStatus);
    const wanted = input.only === undefined || input.only === name;
    if (wanted) steps.push(...plan.steps);
    if (wanted && plan.requeueAfterMs !== undefined)
      requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, plan.requeueAfterMs);
    if (input.only === name) {
      if (plan.nodeState) onlyNodeState = plan.nodeState;
      break;
    }
    const disabled = skyhook.skyhook.metadata.annotations?.[SKYHOOK_ANNOTATIONS.disable] === 'true';
    if (!disabled) gates.add(name, plan.nodeStatus, skyhook.skyhook.spec.sequencing === 'all');
  }
  const nodesByName = new Map(input.nodes.map((node) => [node.name, node]));
  alone(
    planRuntimeRequiredRelease({
      skyhooks: scrs,
      nodes: input.nodes,
      taint: settings.runtimeRequiredTaint,
      // SCRs after `only` were not planned: their status as last written stands in.
      statusOf: (skyhook, node) =>
        planned.get(skyhook)?.[node] ?? readNodeSkyhookRecord(nodesByName.get(node)!, skyhook).status,
      ...(input.only !== undefined ? { only: input.only } : {}),
    }),
  );
  const actions = steps.flat();
  const result: PlanRunResult =
    requeueAfterMs === undefined ? { actions, steps } : { actions, steps, requeueAfterMs: Math.max(0, requeueAfterMs) };
  if (caches) result.cache = caches.result(scrs.map(nameOf));
  if (onlyNodeState) result.nodeState = onlyNodeState;
  return result;
}

/** Lower priority number first, ties by name. */
export function comparePriority(a: Skyhook, b: Skyhook): number {
  const byPriority = (a.spec.priority ?? 200) - (b.spec.priority ?? 200);
  if (byPriority !== 0) return byPriority;
  return compareText(nameOf(a), nameOf(b));
}
