/**
 * The rollout of one SCR, played forward with the controller's own planner on a copy of the
 * cluster's state: every planning pass's actions are applied to the copy as the reconciler would
 * apply them, and every stage that is running afterwards is pretended to complete before the next
 * pass. All SCRs are planned (an earlier one holds nodes back until it completes there), but only the
 * chosen SCR's stages are recorded. Pure: no I/O, no clock.
 */
import { nodeAnnotations, nodeLabels } from '../../api/names.js';
import type { Interrupt } from '../../api/skyhook.js';
import type { PackageStage, SkyhookStatusValue } from '../../controllers/skyhook/node-state.js';
import { packageKey } from '../../controllers/skyhook/node-state.js';
import { planNextActions, type NodeView, type PlannerAction, type PlannerInput, type StageOpSummary } from '../../controllers/skyhook/planner.js';
import { stageOpName } from '../../controllers/skyhook/stage-nodeop.js';

export interface SimulatedStage {
  package: string;
  version: string;
  stage: PackageStage;
  interrupt?: Interrupt;
}

export interface SimulatedNode {
  /** 1-based: nodes that start in the same planning pass form one batch. */
  batch?: number;
  stages: SimulatedStage[];
}

export interface Simulation {
  /** The nodes the SCR would run stages on, by name. */
  nodes: Record<string, SimulatedNode>;
  /** Node views after the first pass: what the statuses (of every SCR) are right now. */
  firstPass: NodeView[];
  /** The SCR's node statuses after the first pass and at the end. */
  statusNow: Record<string, SkyhookStatusValue>;
  statusAtEnd: Record<string, SkyhookStatusValue>;
  passes: number;
  /** The pass limit was reached before the rollout settled. */
  truncated: boolean;
}

const PASS_STEP_MS = 1_000;

export function simulateRollout(input: PlannerInput, skyhook: string, maxPasses = 1_000): Simulation {
  const world = cloneInput(input);
  const nodes: Record<string, SimulatedNode> = {};
  let firstPass: NodeView[] = [];
  let batches = 0;
  let passes = 0;
  for (; passes < maxPasses; passes++) {
    const { actions, requeueAfterMs } = planNextActions(world);
    const created = applyActions(world, actions);
    if (passes === 0) firstPass = structuredClone(world.nodes);
    const ours = created.filter((op) => op.skyhook === skyhook);
    const starting = [...new Set(ours.map((op) => op.node))].filter((node) => nodes[node]?.batch === undefined);
    if (starting.length > 0) batches += 1;
    for (const node of starting) (nodes[node] ??= { stages: [] }).batch = batches;
    for (const op of ours) {
      const stage: SimulatedStage = { package: op.package, version: op.version, stage: op.stage };
      if (op.interrupt) stage.interrupt = op.interrupt;
      (nodes[op.node] ??= { stages: [] }).stages.push(stage);
    }
    const live = world.stageOps.filter((op) => op.phase === 'Pending' || op.phase === 'Running');
    if (created.length === 0 && live.length === 0 && requeueAfterMs === undefined) break;
    // Nothing running but a retry backoff pending: jump to its end.
    world.now += created.length === 0 && live.length === 0 ? Math.max(PASS_STEP_MS, requeueAfterMs ?? 0) : PASS_STEP_MS;
    for (const op of live) Object.assign(op, { phase: 'Completed', finishedAt: world.now });
  }
  return { nodes, firstPass, statusNow: statusesOf(firstPass, skyhook), statusAtEnd: statusesOf(world.nodes, skyhook), passes: Math.min(passes + 1, maxPasses), truncated: passes >= maxPasses };
}

/** The SCR's `status_` annotation of every node that has one. */
function statusesOf(nodes: NodeView[], skyhook: string): Record<string, SkyhookStatusValue> {
  const key = nodeAnnotations.status(skyhook);
  return Object.fromEntries(nodes.flatMap((node) => (node.annotations[key] === undefined ? [] : [[node.name, node.annotations[key] as SkyhookStatusValue]])));
}

type SimulatedOp = StageOpSummary & { interrupt?: Interrupt };

interface World extends PlannerInput {
  stageOps: SimulatedOp[];
}

function cloneInput(input: PlannerInput): World {
  return structuredClone(input);
}

/** The reconciler's effect of each action on the copy; returns the ops created. */
function applyActions(world: World, actions: PlannerAction[]): SimulatedOp[] {
  const created: SimulatedOp[] = [];
  const node = (name: string): NodeView | undefined => world.nodes.find((n) => n.name === name);
  const scr = (name: string) => world.skyhooks.find((s) => s.skyhook.metadata.name === name);
  for (const action of actions) {
    switch (action.kind) {
      case 'writeNodeState': {
        const target = node(action.node);
        if (target) target.annotations[nodeAnnotations.nodeState(action.skyhook)] = action.annotation;
        break;
      }
      case 'setNodeStatus': {
        const target = node(action.node);
        if (!target) break;
        target.annotations[nodeAnnotations.status(action.skyhook)] = action.status;
        target.annotations[nodeAnnotations.version(action.skyhook)] = action.operatorVersion;
        target.labels[nodeLabels.status(action.skyhook)] = action.status;
        break;
      }
      case 'deleteStageOp':
        world.stageOps = world.stageOps.filter((op) => op.name !== action.name);
        break;
      case 'suspendStageOp':
        for (const op of world.stageOps) if (op.name === action.name) op.suspended = action.suspend;
        break;
      case 'markStageOpRecorded':
        for (const op of world.stageOps) if (op.name === action.name) op.recorded = true;
        break;
      case 'createStageOp': {
        const op: SimulatedOp = {
          name: stageOpName(action),
          skyhook: action.skyhook,
          node: action.node,
          package: action.package.name,
          version: action.package.version,
          image: action.package.image,
          stage: action.stage,
          phase: 'Running',
          restarts: 0,
          previousRestarts: action.previousRestarts,
          recorded: false,
        };
        if (action.package.containerSHA) op.containerSHA = action.package.containerSHA;
        if (action.interrupt) op.interrupt = action.interrupt;
        world.stageOps.push(op);
        created.push(op);
        break;
      }
      case 'setSkyhookStatus': {
        const target = scr(action.skyhook);
        if (target) target.skyhook.status = action.status;
        break;
      }
      case 'upsertPackageConfigMap': {
        const target = scr(action.skyhook);
        if (target) target.packageConfigMaps[packageKey(action.package, action.version)] = action.data;
        break;
      }
      case 'event':
        break;
    }
  }
  return created;
}
