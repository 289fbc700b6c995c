/**
 * The rollout of one SCR, played forward with the controller's own planner on a copy of the
 * cluster's state: every planning pass's actions are applied to the copy as the reconciler would
 * apply them, and every stage running afterwards is pretended to complete before the next pass.
 * All SCRs are planned (an earlier one holds nodes back until it completes there), but only the
 * chosen SCR's stages and holds are recorded. Pods stay where they are: a pod that holds an
 * interrupt holds it to the end. Pure: no I/O, no clock.
 */
import { nodeAnnotations } from '../../api/names.js';
import type { Interrupt, SkyhookStatus } from '../../api/skyhook.js';
import type { PackageStage, SkyhookStatusValue } from '../../api/node-state.js';
import { planNextActions } from '../../controllers/skyhook/plan/planner.js';
import type {
  CreateStageOp,
  NodeView,
  PlannerAction,
  PlannerInput,
} from '../../controllers/skyhook/plan/planner-types.js';
import {
  replayActions,
  type ReplayedCreate,
  type ReplaySnapshot,
} from '../../controllers/skyhook/plan/replay-actions.js';
import { stageOpName } from '../../controllers/skyhook/build/stage-nodeop.js';
import { nameOf } from '../../api/object-meta.js';

export interface SimulatedStage {
  package: string;
  version: string;
  stage: PackageStage;
  interrupt?: Interrupt;
  /** The stage runs on the cordoned node, after a drain. */
  cordon?: boolean;
  drain?: boolean;
}

export interface SimulatedNode {
  /** 1-based: nodes the rollout admits in the same planning pass form one batch. */
  batch?: number;
  stages: SimulatedStage[];
  /** Every distinct `waiting_<scr>` value (`<Reason>: <detail>`) the planner gave the node, in order. */
  holds: string[];
  /** The SCR cordoned the node (for an interrupt). */
  cordoned?: boolean;
}

export interface Simulation {
  /** Every node the SCR targets (the planner wrote a status for), by name. */
  nodes: Record<string, SimulatedNode>;
  /** The SCR's node statuses after the first pass (right after an apply) and at the end. */
  statusOnApply: Record<string, SkyhookStatusValue>;
  statusAtEnd: Record<string, SkyhookStatusValue>;
  /** The hold of each node at the end, for the nodes still held. */
  holdAtEnd: Record<string, string>;
  /** The SCR's status right after an apply (the planner's first pass), e.g. its compartments. */
  skyhookStatusOnApply?: SkyhookStatus;
  passes: number;
  /** The pass limit was reached before the rollout settled. */
  truncated: boolean;
}

const PASS_STEP_MS = 1_000;

export function simulateRollout(input: PlannerInput, skyhook: string, maxPasses = 1_000): Simulation {
  const world = structuredClone(input);
  const nodes: Record<string, SimulatedNode> = {};
  const entry = (node: string): SimulatedNode => (nodes[node] ??= { stages: [], holds: [] });
  let statusOnApply: Record<string, SkyhookStatusValue> = {};
  let skyhookStatusOnApply: SkyhookStatus | undefined;
  let batches = 0;
  let passes = 0;
  for (; passes < maxPasses; passes++) {
    const { actions, requeueAfterMs } = planNextActions(world);
    const before = snapshotOf(world);
    const created = applyActions(world, actions);
    const changed = snapshotOf(world) !== before;
    for (const action of actions)
      if (action.kind === 'cordonNode' && action.claim === nodeAnnotations.cordon(skyhook))
        entry(action.node).cordoned = true;
    if (passes === 0) {
      skyhookStatusOnApply = world.skyhooks.find((s) => s.skyhook.metadata.name === skyhook)?.skyhook.status;
      statusOnApply = annotationOf(world.nodes, nodeAnnotations.status(skyhook)) as Record<string, SkyhookStatusValue>;
      for (const node of Object.keys(statusOnApply)) entry(node);
    }
    for (const [node, hold] of Object.entries(annotationOf(world.nodes, nodeAnnotations.waiting(skyhook)))) {
      if (!entry(node).holds.includes(hold)) entry(node).holds.push(hold);
    }
    // A batch is the nodes the rollout admits in one pass: their status turns in_progress together.
    const admitted = Object.entries(annotationOf(world.nodes, nodeAnnotations.status(skyhook)))
      .filter(
        ([node, status]) => (status === 'in_progress' || status === 'erroring') && nodes[node]?.batch === undefined,
      )
      .map(([node]) => node);
    if (admitted.length > 0) batches += 1;
    for (const node of admitted) entry(node).batch = batches;
    for (const { action } of created)
      if (action.skyhook === skyhook) entry(action.node).stages.push(simulatedStage(action));
    const live = world.stageOps.filter((op) => op.phase === 'Pending' || op.phase === 'Running');
    // Settled: the pass changed nothing, nothing runs, and no backoff is pending.
    if (!changed && live.length === 0 && requeueAfterMs === undefined) break;
    // Nothing to do but wait for a retry backoff: jump to its end.
    world.now += !changed && live.length === 0 ? Math.max(PASS_STEP_MS, requeueAfterMs ?? 0) : PASS_STEP_MS;
    for (const op of live) Object.assign(op, { phase: 'Completed', finishedAt: world.now });
  }
  return {
    nodes,
    statusOnApply,
    statusAtEnd: annotationOf(world.nodes, nodeAnnotations.status(skyhook)) as Record<string, SkyhookStatusValue>,
    holdAtEnd: annotationOf(world.nodes, nodeAnnotations.waiting(skyhook)),
    ...(skyhookStatusOnApply ? { skyhookStatusOnApply } : {}),
    passes: Math.min(passes + 1, maxPasses),
    truncated: passes >= maxPasses,
  };
}

/** What the next pass plans from (the clock aside): a pass that leaves it unchanged changed nothing. */
function snapshotOf(world: PlannerInput): string {
  return JSON.stringify([world.nodes, world.stageOps, world.skyhooks]);
}

/** `key`'s value on every node that has it. */
function annotationOf(nodes: NodeView[], key: string): Record<string, string> {
  return Object.fromEntries(
    nodes.flatMap((node) => (node.annotations[key] === undefined ? [] : [[node.name, node.annotations[key]]])),
  );
}

/** Uids of simulated ops: unique, like the API server's, even when a name is reused. */
let simulatedUids = 0;

/** The reconciler's effect of each action on the copy (replay-actions.ts); returns the ops created. */
function applyActions(world: PlannerInput, actions: PlannerAction[]): ReplayedCreate[] {
  const snapshot: ReplaySnapshot = {
    nodes: world.nodes,
    stageOps: world.stageOps,
    skyhooks: world.skyhooks.map((input) => input.skyhook),
    configMaps: Object.fromEntries(world.skyhooks.map((input) => [nameOf(input.skyhook), input.packageConfigMaps])),
  };
  const created = replayActions(snapshot, actions, {
    opName: stageOpName,
    uid: () => `simulated-${++simulatedUids}`,
  });
  world.stageOps = snapshot.stageOps;
  return created;
}

/** What `skyhook plan` shows of a stage it created. */
function simulatedStage(action: CreateStageOp): SimulatedStage {
  const simulated: SimulatedStage = {
    package: action.package.name,
    version: action.package.version,
    stage: action.stage,
  };
  if (action.interrupt) simulated.interrupt = action.interrupt;
  if (action.cordon) simulated.cordon = true;
  if (action.drain?.enabled) simulated.drain = true;
  return simulated;
}
