/**
 * The rollout of one SCR, played forward with the controller's own planner on a copy of the
 * cluster's state: every planning pass's actions are applied to the copy as the reconciler would
 * apply them, and every stage running afterwards is pretended to complete before the next pass.
 * All SCRs are planned (an earlier one holds nodes back until it completes there), but only the
 * chosen SCR's stages and holds are recorded. Pods stay where they are: a pod that holds an
 * interrupt holds it to the end. Pure: no I/O, no clock.
 */
import { nodeAnnotations, nodeLabels } from '../../api/names.js';
import type { Interrupt, SkyhookStatus } from '../../api/skyhook.js';
import { cordonAfterRelease } from '../../jobs/cordon/claims.js';
import type { PackageStage, SkyhookStatusValue } from '../../api/node-state.js';
import { nodeStateAnnotations, packageKey } from '../../api/node-state.js';
import { planNextActions } from '../../controllers/skyhook/plan/planner.js';
import {
  type NodeView,
  type PlannerAction,
  type PlannerInput,
  type StageOpSummary,
} from '../../controllers/skyhook/plan/planner-types.js';
import { stageOpName } from '../../controllers/skyhook/build/stage-nodeop.js';

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
  const world = structuredClone(input) as World;
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
    for (const op of created) if (op.skyhook === skyhook) entry(op.node).stages.push(op.simulated);
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
function snapshotOf(world: World): string {
  return JSON.stringify([world.nodes, world.stageOps, world.skyhooks]);
}

/** `key`'s value on every node that has it. */
function annotationOf(nodes: NodeView[], key: string): Record<string, string> {
  return Object.fromEntries(
    nodes.flatMap((node) => (node.annotations[key] === undefined ? [] : [[node.name, node.annotations[key]]])),
  );
}

type SimulatedOp = StageOpSummary & { simulated: SimulatedStage };

/** Uids of simulated ops: unique, like the API server's, even when a name is reused. */
let simulatedUids = 0;

interface World extends PlannerInput {
  stageOps: SimulatedOp[];
}

/** The reconciler's effect of each action on the copy; returns the ops created. */
function applyActions(world: World, actions: PlannerAction[]): SimulatedOp[] {
  const created: SimulatedOp[] = [];
  const node = (name: string): NodeView =>
    world.nodes.find((n) => n.name === name) ?? { name, createdAt: 0, labels: {}, annotations: {}, taints: [] };
  const scr = (name: string) => world.skyhooks.find((s) => s.skyhook.metadata.name === name);
  for (const action of actions) {
    switch (action.kind) {
      case 'writeNodeState':
        Object.assign(node(action.node).annotations, nodeStateAnnotations(action.skyhook, action.annotation));
        break;
      case 'setNodeStatus': {
        const target = node(action.node);
        target.annotations[nodeAnnotations.status(action.skyhook)] = action.status;
        target.annotations[nodeAnnotations.version(action.skyhook)] = action.operatorVersion;
        target.labels[nodeLabels.status(action.skyhook)] = action.status;
        break;
      }
      case 'setNodeAnnotations':
        setAnnotations(node(action.node), action.annotations);
        break;
      case 'cordonNode': {
        const target = node(action.node);
        target.unschedulable = true;
        target.annotations[action.claim] = 'true';
        break;
      }
      case 'releaseNodeCordon': {
        const target = node(action.node);
        const release = cordonAfterRelease(target, action.claim);
        for (const key of release.remove) delete target.annotations[key];
        if (release.uncordon) target.unschedulable = false;
        break;
      }
      case 'addNodeTaint': {
        const target = node(action.node);
        if (!target.taints.some((t) => t.key === action.taint.key && t.effect === action.taint.effect))
          target.taints.push({ ...action.taint });
        setAnnotations(target, action.annotations ?? {});
        break;
      }
      case 'removeNodeTaint': {
        const target = node(action.node);
        target.taints = target.taints.filter(
          (t) =>
            !(
              t.key === action.taint.key &&
              t.effect === action.taint.effect &&
              (t.value ?? '') === (action.taint.value ?? '')
            ),
        );
        break;
      }
      case 'deleteStageOp':
        world.stageOps = world.stageOps.filter((op) => op.name !== action.name);
        break;
      case 'suspendStageOp':
        for (const op of world.stageOps) if (op.name === action.name) op.suspended = action.suspend;
        break;
      case 'reportFailedStage':
        break;
      case 'createStageOp': {
        const simulated: SimulatedStage = {
          package: action.package.name,
          version: action.package.version,
          stage: action.stage,
        };
        if (action.interrupt) simulated.interrupt = action.interrupt;
        if (action.cordon) simulated.cordon = true;
        if (action.drain?.enabled) simulated.drain = true;
        const op: SimulatedOp = {
          name: stageOpName(action),
          uid: `simulated-${++simulatedUids}`,
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
          simulated,
        };
        if (action.package.containerSHA) op.containerSHA = action.package.containerSHA;
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
      default:
        // A new action kind must be simulated here, or plans would silently diverge from the controller.
        return unhandled(action);
    }
  }
  return created;
}

function setAnnotations(node: NodeView, annotations: Record<string, string | null>): void {
  for (const [key, value] of Object.entries(annotations)) {
    if (value === null) delete node.annotations[key];
    else node.annotations[key] = value;
  }
}

function unhandled(action: never): never {
  throw new Error(`skyhook plan cannot simulate planner action ${JSON.stringify(action)}`);
}
