/**
 * How one SCR's planned steps become the writes the writer applies one step after the other, each
 * step's writes concurrently. Awaiting ~300 writes one at a time was the Skyhook reconcile's serial
 * bottleneck (about 1 s per reconcile at 1000 nodes, with the CPU idle); yet the order between the
 * buckets of `action-order.ts` is the crash-safety and budget order and must stay strict. So:
 *
 * - a step is one of the planner's steps (`PlanResult.steps`): a bucket of `orderSteps`, or an action
 *   no bucket claims (the planner's runtime-required taints), which is a step of its own;
 * - node state, status and plain annotations of one node that follow each other become one patch,
 *   as they always did, in the step of the node's first such action;
 * - inside a step, the writes of one node (a cordon then that node's annotations; its metadata
 *   ConfigMap then its NodeOp, which is one action) form one chain, applied in order; chains of
 *   different nodes, ops and ConfigMaps are independent and run concurrently.
 *
 * Pure: no I/O, so the cutting is unit-tested on its own (apply-steps.test.ts).
 */
import { nodeAnnotations, nodeLabels } from '../../../api/names.js';
import { nodeStateAnnotations } from '../../../api/node-state.js';
import type { PlannerAction } from '../plan/planner-types.js';
import type { NodeWrite } from './node-writes.js';

type NodeWriteKinds = 'writeNodeState' | 'setNodeStatus' | 'setNodeAnnotations';

/** An action applied as it is (everything but the node writes merged into one patch per node). */
export type DirectAction = Exclude<PlannerAction, { kind: NodeWriteKinds }>;

/**
 * One write of a step: a node's merged state patch, an action applied as it is, or a node-metadata
 * pre-write (the ConfigMap a stage about to start mounts, written beside the node's state patch from
 * the node as that patch leaves it; see `withMetadataPreWrites`).
 */
export type ApplyUnit =
  | { kind: 'nodeWrite'; write: NodeWrite }
  | { kind: 'action'; action: DirectAction }
  | { kind: 'nodeMetadata'; write: NodeWrite };

/** Units applied in order, one after the other (one node's, one object's). */
export type ApplyChain = ApplyUnit[];

/** A step's units in the planner's order; `chains` groups them for concurrent application. */
export type ApplyStep = ApplyUnit[];

const isNodeWrite = (action: PlannerAction): action is Extract<PlannerAction, { kind: NodeWriteKinds }> =>
  action.kind === 'writeNodeState' || action.kind === 'setNodeStatus' || action.kind === 'setNodeAnnotations';

/** Folds one node-write action into the node's pending patch. */
function mergeNodeWrite(write: NodeWrite, action: Extract<PlannerAction, { kind: NodeWriteKinds }>): void {
  if (action.kind === 'writeNodeState')
    Object.assign(write.annotations, nodeStateAnnotations(action.skyhook, action.annotation));
  // Plain annotations (a hold's reason, a lifted runtime-required mark) ride along in the same patch.
  else if (action.kind === 'setNodeAnnotations') Object.assign(write.annotations, action.annotations);
  else {
    write.annotations[nodeAnnotations.status(action.skyhook)] = action.status;
    write.annotations[nodeAnnotations.version(action.skyhook)] = action.operatorVersion;
    write.labels[nodeLabels.status(action.skyhook)] = action.status;
    write.conditions = action.conditions;
  }
}

/**
 * What must not run concurrently with another write of the same key: writes of one node, of one
 * NodeOp, of one ConfigMap. Events are recorded in one chain, in the planner's order.
 */
export function chainKey(unit: ApplyUnit): string {
  if (unit.kind === 'nodeWrite') return `node/${unit.write.node}`;
  // Its own chain: the point is to run beside the node's patch, not after it.
  if (unit.kind === 'nodeMetadata') return `node-metadata/${unit.write.node}`;
  const { action } = unit;
  switch (action.kind) {
    case 'cordonNode':
    case 'releaseNodeCordon':
    case 'addNodeTaint':
    case 'removeNodeTaint':
    case 'createStageOp':
      return `node/${action.node}`;
    case 'deleteStageOp':
    case 'suspendStageOp':
    case 'reportFailedStage':
      return `op/${action.name}`;
    case 'upsertPackageConfigMap':
      return `configmap/${action.skyhook}/${action.package}/${action.version}`;
    case 'setSkyhookStatus':
      return `skyhook/${action.skyhook}`;
    case 'event':
      return 'events';
  }
}

/** The units in the writer's order, each with the index of the planner's step it belongs to. */
function units(planSteps: readonly (readonly PlannerAction[])[]): Array<{ unit: ApplyUnit; step: number }> {
  const out: Array<{ unit: ApplyUnit; step: number }> = [];
  const pending = new Map<string, { write: NodeWrite; step: number }>();
  const flush = (): void => {
    for (const { write, step } of pending.values()) out.push({ unit: { kind: 'nodeWrite', write }, step });
    pending.clear();
  };
  planSteps.forEach((actions, step) => {
    for (const action of actions) add(action, step);
  });
  flush();
  return out;

  function add(action: PlannerAction, step: number): void {
    if (isNodeWrite(action)) {
      const entry = pending.get(action.node) ?? {
        write: { node: action.node, annotations: {}, labels: {} },
        step,
      };
      mergeNodeWrite(entry.write, action);
      pending.set(action.node, entry);
      return;
    }
    flush();
    out.push({ unit: { kind: 'action', action }, step });
  }
}

/** The planner's steps as the writer's (see the module comment). */
export function applySteps(planSteps: readonly (readonly PlannerAction[])[]): ApplyStep[] {
  return withMetadataPreWrites(cutSteps(planSteps));
}

/** The node a unit writes to (its state, cordon, taints, or a NodeOp on it), if any. */
function nodeOf(unit: ApplyUnit): string | undefined {
  if (unit.kind !== 'action') return unit.write.node;
  const { action } = unit;
  return 'node' in action && typeof action.node === 'string' ? action.node : undefined;
}

/**
 * A node whose writes in this pass are exactly its state patch and then the creation of its next
 * stage's NodeOp (a stage starting: the common case of a rollout) gets its node-metadata ConfigMap
 * written in the step of the patch, beside it, from the node as the patch will leave it, instead of
 * after it in the step of the NodeOp: one API round trip less between a stage's end and the next
 * stage's start. The create still ensures the ConfigMap from the node the patch returned (it finds
 * the pre-write equal and writes nothing, or writes what changed meanwhile), so the Job always
 * mounts the node as written. Nodes with other writes in the pass (a cordon, a taint) keep the
 * sequential order: their ConfigMap must show those too.
 */
function withMetadataPreWrites(steps: ApplyStep[]): ApplyStep[] {
  const byNode = new Map<string, Array<{ unit: ApplyUnit; step: number }>>();
  steps.forEach((units, step) => {
    for (const unit of units) {
      const node = nodeOf(unit);
      if (node === undefined) continue;
      const writes = byNode.get(node) ?? [];
      writes.push({ unit, step });
      byNode.set(node, writes);
    }
  });
  const out = steps.map((units) => [...units]);
  for (const writes of byNode.values()) {
    const [patch, create] = writes;
    if (writes.length !== 2 || patch?.unit.kind !== 'nodeWrite' || create?.unit.kind !== 'action') continue;
    if (create.unit.action.kind !== 'createStageOp' || create.step <= patch.step) continue;
    out[patch.step]!.push({ kind: 'nodeMetadata', write: patch.unit.write });
  }
  return out;
}

/** The planner's steps cut into the writer's, node writes merged (see the module comment). */
function cutSteps(planSteps: readonly (readonly PlannerAction[])[]): ApplyStep[] {
  const steps: ApplyStep[] = [];
  let current: { step: number; units: ApplyUnit[] } | undefined;
  for (const { unit, step } of units(planSteps)) {
    if (current?.step !== step) {
      if (current) steps.push(current.units);
      current = { step, units: [] };
    }
    current.units.push(unit);
  }
  if (current) steps.push(current.units);
  return steps;
}

/** A step's units as chains (one per `chainKey`, in order): chains run concurrently, a chain's units in order. */
export function chains(step: readonly ApplyUnit[]): ApplyChain[] {
  const byKey = new Map<string, ApplyChain>();
  for (const unit of step) {
    const key = chainKey(unit);
    const chain = byKey.get(key) ?? [];
    chain.push(unit);
    byKey.set(key, chain);
  }
  return [...byKey.values()];
}
