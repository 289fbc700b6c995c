/**
 * How one SCR's planned actions are cut into steps the writer applies one after the other, each
 * step's writes concurrently. Awaiting ~300 writes one at a time was the Skyhook reconcile's serial
 * bottleneck (about 1 s per reconcile at 1000 nodes, with the CPU idle); yet the order between the
 * buckets of `action-order.ts` is the crash-safety and budget order and must stay strict. So:
 *
 * - a step is a run of actions of one bucket (`actionBucket`); an action no bucket claims (the
 *   planner's runtime-required taints, or an action copied since it was ordered) is a step of its
 *   own, applied as before, one by one;
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
import { actionBucket } from '../plan/action-order.js';
import type { PlannerAction } from '../plan/planner-types.js';
import type { NodeWrite } from './node-writes.js';

type NodeWriteKinds = 'writeNodeState' | 'setNodeStatus' | 'setNodeAnnotations';

/** An action applied as it is (everything but the node writes merged into one patch per node). */
export type DirectAction = Exclude<PlannerAction, { kind: NodeWriteKinds }>;

/** One write of a step: a node's merged state patch, or an action applied as it is. */
export type ApplyUnit = { kind: 'nodeWrite'; write: NodeWrite } | { kind: 'action'; action: DirectAction };

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

/** The units in the writer's order, each with the step it belongs to (a bucket, or its own). */
function units(actions: readonly PlannerAction[]): Array<{ unit: ApplyUnit; step: string }> {
  const out: Array<{ unit: ApplyUnit; step: string }> = [];
  const pending = new Map<string, { write: NodeWrite; step: string }>();
  const flush = (): void => {
    for (const { write, step } of pending.values()) out.push({ unit: { kind: 'nodeWrite', write }, step });
    pending.clear();
  };
  actions.forEach((action, index) => {
    const bucket = actionBucket(action);
    const step = bucket === undefined ? `alone/${index}` : `bucket/${bucket}`;
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
  });
  flush();
  return out;
}

/** The actions cut into steps (see the module comment). */
export function applySteps(actions: readonly PlannerAction[]): ApplyStep[] {
  const steps: ApplyStep[] = [];
  let current: { step: string; units: ApplyUnit[] } | undefined;
  for (const { unit, step } of units(actions)) {
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
