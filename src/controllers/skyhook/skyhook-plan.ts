/**
 * Planning one SCR: bring every targeted node's state up to date (op outcomes, version changes,
 * config cycles), decide each node's status, admit nodes within the budget, start their next stages,
 * and derive the SCR status. Actions come out grouped in a crash-safe order: ConfigMaps, node state,
 * node status, deletions, suspensions, creations, recorded marks, SCR status, events.
 */
import { nodeAnnotations, SKYHOOK_ANNOTATIONS } from '../../api/names.js';
import { skyhookSpecProblems } from '../../api/spec-checks.js';
import { planConfigCycles } from './config-cycle.js';
import { isIgnored, selectorMatches, untoleratedTaints } from './node-eligibility.js';
import { nodeSkyhookConditions, readNodeSkyhookRecord, serializeNodeState, type SkyhookStatusValue } from './node-state.js';
import { absorbOpOutcomes, advanceNode, deleteOp, liveOps, recordRunningStages, type NodeWork } from './node-work.js';
import type { PriorityGates } from './planner.js';
import type { CreateStageOp, NodeView, PlannerAction, PlannerEvent, PlannerSettings, SkyhookInput, StageOpSummary } from './planner-types.js';
import { admitNodes, rolloutBudgets } from './rollout.js';
import { skyhookStatusUpdate } from './skyhook-status-update.js';
import { planNodePackages, type NodePackagesPlan } from './stage-machine.js';
import { applyVersionChanges, startConfigCycle } from './state-transitions.js';

export interface SkyhookPlanInput {
  skyhook: SkyhookInput;
  nodes: NodeView[];
  stageOps: StageOpSummary[];
  now: number;
  settings: PlannerSettings;
  gates: PriorityGates;
}

export interface SkyhookPlan {
  actions: PlannerAction[];
  nodeStatus: Record<string, SkyhookStatusValue>;
  requeueAfterMs?: number;
}

export function planSkyhook({ skyhook: input, nodes, stageOps, now, settings, gates }: SkyhookPlanInput): SkyhookPlan {
  const scr = input.skyhook;
  const name = scr.metadata.name ?? '';
  const spec = scr.spec;
  const paused = scr.metadata.annotations?.[SKYHOOK_ANNOTATIONS.pause] === 'true';
  const disabled = scr.metadata.annotations?.[SKYHOOK_ANNOTATIONS.disable] === 'true';
  const problems = skyhookSpecProblems(spec);
  const frozen = paused || disabled || problems.length > 0;
  const ops = stageOps.filter((op) => op.skyhook === name);
  const targeted = nodes.filter((node) => selectorMatches(spec.nodeSelectors, node.labels)).sort((a, b) => a.createdAt - b.createdAt || (a.name < b.name ? -1 : 1));
  const targetedNames = new Set(targeted.map((node) => node.name));
  const events: PlannerEvent[] = [];
  const deletes = ops.filter((op) => !targetedNames.has(op.node) && op.phase !== 'Completed' && op.phase !== 'Failed' && !op.deleting).map((op) => ({ kind: 'deleteStageOp' as const, name: op.name, reason: 'node no longer targeted' }));

  let configUpdates: Record<string, string[]> = { ...(scr.status?.configUpdates ?? {}) };
  const works: NodeWork[] = targeted.map((node) => {
    const record = readNodeSkyhookRecord(node, name);
    const work: NodeWork = { node, record, state: record.state, ops: ops.filter((op) => op.node === node.name), recorded: [] };
    if (record.malformed) return work;
    events.push(...absorbOpOutcomes(work));
    if (!frozen) {
      const change = applyVersionChanges(work.state, spec.packages);
      work.state = change.state;
      for (const pkg of change.changedPackages) delete configUpdates[pkg];
    }
    return work;
  });
  const blockedReason = (work: NodeWork): 'malformed' | 'ignored' | 'taint' | undefined =>
    work.record.malformed ? 'malformed' : isIgnored(work.node) ? 'ignored' : untoleratedTaints(work.node, spec).length > 0 ? 'taint' : undefined;

  const upserts: PlannerAction[] = [];
  if (!frozen) {
    const eligible = works.filter((work) => blockedReason(work) === undefined);
    const cycles = planConfigCycles({ packages: spec.packages, configMaps: input.packageConfigMaps, configUpdates, nodes: eligible });
    configUpdates = cycles.configUpdates;
    for (const upsert of cycles.upserts) upserts.push({ kind: 'upsertPackageConfigMap', skyhook: name, ...upsert });
    for (const pkg of cycles.cycles) {
      for (const work of works.filter((w) => !w.record.malformed)) {
        work.state = startConfigCycle(work.state, pkg, spec.packages![pkg]!);
        for (const op of liveOps(work).filter((o) => o.package === pkg && ['config', 'interrupt', 'post-interrupt'].includes(o.stage))) {
          deletes.push(deleteOp(work, op, 'configuration changed'));
        }
      }
    }
  }

  const plans = new Map<NodeWork, NodePackagesPlan>();
  const nodeStatus: Record<string, SkyhookStatusValue> = {};
  for (const work of works) {
    const plan = planNodePackages({ packages: spec.packages, state: work.state, configUpdates, ops: work.ops, now, retry: { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs } });
    plans.set(work, plan);
    if (!work.record.malformed) recordRunningStages(work, plan);
    const blocked = blockedReason(work);
    nodeStatus[work.node.name] = plan.complete && !work.record.malformed ? 'complete'
      : disabled ? 'disabled'
      : paused ? 'paused'
      : blocked !== undefined || problems.length > 0 ? 'blocked'
      : 'waiting';
  }

  // Admission: nodes still `waiting` here are ready unless an earlier SCR holds them.
  const ready = (work: NodeWork): boolean => nodeStatus[work.node.name] === 'waiting' && gates.blockersOn(work.node.name).length === 0;
  const priority = { ...(scr.status?.nodePriority ?? {}) };
  const admitted = new Set<string>();
  for (const compartment of rolloutBudgets(spec, targeted.map((node) => node.name))) {
    const inCompartment = works.filter((work) => compartment.nodes.includes(work.node.name));
    const candidates = inCompartment.map((work) => ({
      node: work.node.name,
      busy: work.ops.some((op) => op.phase === 'Pending' || op.phase === 'Running'),
      ready: !frozen && ready(work),
      sticky: priority[work.node.name] !== undefined || work.record.status === 'in_progress' || work.record.status === 'erroring',
    }));
    for (const node of admitNodes(candidates, compartment.ceiling)) admitted.add(node);
  }

  const creates: CreateStageOp[] = [];
  let requeueAfterMs: number | undefined;
  for (const work of works) {
    const plan = plans.get(work)!;
    if (!frozen) for (const op of plan.strayOps) deletes.push(deleteOp(work, op, 'no package needs this stage now'));
    if (!admitted.has(work.node.name)) continue;
    const actions = advanceNode(work, plan, name, spec.serial === true, settings, now);
    creates.push(...actions.creates);
    deletes.push(...actions.deletes);
    if (actions.requeueAfterMs !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, actions.requeueAfterMs);
    nodeStatus[work.node.name] = Object.values(work.state).some((entry) => entry.state === 'erroring') ? 'erroring' : 'in_progress';
    priority[work.node.name] ??= new Date(now).toISOString();
  }
  for (const node of Object.keys(priority)) if (!targetedNames.has(node) || nodeStatus[node] === 'complete') delete priority[node];

  const suspends: PlannerAction[] = ops
    .filter((op) => (op.phase === 'Pending' || op.phase === 'Running') && !op.deleting && (op.suspended === true) !== paused)
    .map((op) => ({ kind: 'suspendStageOp', name: op.name, suspend: paused }));

  const nodeWrites: PlannerAction[] = [];
  const statusWrites: PlannerAction[] = [];
  for (const work of works) {
    const status = nodeStatus[work.node.name]!;
    if (!work.record.malformed) {
      const annotation = serializeNodeState(work.state);
      const current = work.node.annotations[nodeAnnotations.nodeState(name)];
      if (annotation !== (current ?? '{}')) nodeWrites.push({ kind: 'writeNodeState', node: work.node.name, skyhook: name, state: work.state, annotation });
    }
    if (status !== work.record.status || work.record.version !== settings.operatorVersion) {
      statusWrites.push({ kind: 'setNodeStatus', node: work.node.name, skyhook: name, status, operatorVersion: settings.operatorVersion, conditions: nodeSkyhookConditions(name, status === 'complete', work.state) });
      if (status === 'complete' && work.record.status !== 'complete') {
        events.push({ kind: 'event', involved: { kind: 'Node', name: work.node.name }, type: 'Normal', reason: 'State', message: `Skyhook [${name}] complete.` });
      }
    }
  }
  for (const op of creates) {
    events.push({ kind: 'event', involved: { kind: 'Skyhook', name }, type: 'Normal', reason: 'Apply', message: `Applying package [${op.package.name}:${op.package.version}] from [skyhook:${name}] stage [${op.stage}] on node [${op.node}]` });
  }

  const statusUpdate = skyhookStatusUpdate({
    skyhook: scr,
    now,
    nodeStatus,
    nodeState: Object.fromEntries(works.filter((work) => !work.record.malformed && Object.keys(work.state).length > 0).map((work) => [work.node.name, work.state])),
    nodePriority: priority,
    configUpdates,
    paused,
    disabled,
    problems,
    malformedNodes: works.filter((work) => work.record.malformed).map((work) => work.node.name),
    ignoredNodes: works.filter((work) => blockedReason(work) === 'ignored').map((work) => work.node.name),
    untoleratedNodes: works.filter((work) => blockedReason(work) === 'taint').map((work) => work.node.name),
    lastCreated: creates.at(-1),
  });
  events.push(...statusUpdate.events);
  const marks: PlannerAction[] = works.flatMap((work) => work.recorded.map((op) => ({ kind: 'markStageOpRecorded' as const, name: op.name, phase: op.phase })));
  const actions: PlannerAction[] = [...upserts, ...nodeWrites, ...statusWrites, ...deletes, ...suspends, ...creates, ...marks];
  if (statusUpdate.status) actions.push({ kind: 'setSkyhookStatus', skyhook: name, status: statusUpdate.status });
  actions.push(...events);
  return requeueAfterMs === undefined ? { actions, nodeStatus } : { actions, nodeStatus, requeueAfterMs };
}
