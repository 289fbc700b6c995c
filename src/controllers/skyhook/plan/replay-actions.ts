/**
 * The one in-memory interpreter of the planner's actions: what each action does to the cluster, as
 * the reconciler applies it (write/apply-actions.ts), played on a snapshot instead. `skyhook plan`
 * (cli/plan/simulation.ts) rolls an SCR out with it, and the planner's tests run whole rollouts with
 * it (test/unit/controllers/skyhook/plan/world.ts), so the shipped dry-run and the test double are the same code.
 * No I/O and no clock: the only thing it changes is the snapshot it is given, in place (callers
 * keep references to its nodes and SCRs and see them change, as they would watch the cluster's).
 */
import { nodeAnnotations, nodeLabels } from '../../../api/names.js';
import { nodeStateAnnotations, packageKey } from '../../../api/node-state.js';
import type { Skyhook } from '../../../api/skyhook.js';
import { cordonAfterRelease } from '../../../jobs/cordon/claims.js';
import type { CreateStageOp, NodeView, PlannerAction, StageOpSummary } from './planner-types.js';

/** The part of the cluster the planner's actions change. */
export interface ReplaySnapshot {
  nodes: NodeView[];
  /** Replaced (not changed in place) when ops are deleted or suspended. */
  stageOps: StageOpSummary[];
  skyhooks: Skyhook[];
  /** The data of each SCR's package ConfigMaps, by SCR name, then by `packageKey`. */
  configMaps: Record<string, Record<string, Record<string, string>>>;
}

export interface ReplayOptions {
  /** The name of the op a `createStageOp` makes (the controller's `stageOpName`, or a test's own). */
  opName: (action: CreateStageOp) => string;
  /** A new uid for each op created: unique, like the API server's, even when a name is reused. */
  uid: () => string;
  /**
   * Throw where the cluster would refuse: an action on a node or SCR the snapshot lacks, an op
   * name already taken. Otherwise such an action changes nothing (a node) or is applied anyway (an op).
   */
  strict?: boolean;
  /**
   * Replace a changed node, SCR or ConfigMap record with a changed copy instead of changing it in
   * place, as an informer does: incremental planning (plan-cache.ts) tells what changed by identity.
   */
  copyOnWrite?: boolean;
}

export interface ReplayedCreate {
  action: CreateStageOp;
  /** The op as created: Running, nothing recorded yet. */
  op: StageOpSummary;
}

/** Applies `actions` in order to `snapshot`; returns the ops created. */
export function replayActions(
  snapshot: ReplaySnapshot,
  actions: PlannerAction[],
  options: ReplayOptions,
): ReplayedCreate[] {
  const created: ReplayedCreate[] = [];
  for (const action of actions) {
    switch (action.kind) {
      case 'deleteStageOp':
        snapshot.stageOps = snapshot.stageOps.filter((op) => op.name !== action.name);
        break;
      case 'suspendStageOp':
        snapshot.stageOps = snapshot.stageOps.map((op) =>
          op.name === action.name ? { ...op, suspended: action.suspend } : op,
        );
        break;
      case 'createStageOp': {
        const op = createdOp(action, options);
        if (options.strict && snapshot.stageOps.some((existing) => existing.name === op.name))
          throw new Error(`op ${op.name} already exists`);
        snapshot.stageOps.push(op);
        created.push({ action, op });
        break;
      }
      case 'setSkyhookStatus': {
        const index = snapshot.skyhooks.findIndex((candidate) => candidate.metadata.name === action.skyhook);
        const skyhook = snapshot.skyhooks[index];
        if (skyhook && options.copyOnWrite) snapshot.skyhooks[index] = { ...skyhook, status: action.status };
        else if (skyhook) skyhook.status = action.status;
        else if (options.strict) throw new Error(`no Skyhook ${action.skyhook}`);
        break;
      }
      case 'upsertPackageConfigMap': {
        const existing = snapshot.configMaps[action.skyhook] ?? {};
        const configMaps = options.copyOnWrite ? { ...existing } : existing;
        configMaps[packageKey(action.package, action.version)] = { ...action.data };
        snapshot.configMaps[action.skyhook] = configMaps;
        break;
      }
      case 'reportFailedStage':
      case 'event':
        break;
      default: {
        const index = snapshot.nodes.findIndex((candidate) => candidate.name === action.node);
        const found = snapshot.nodes[index];
        const node = found && options.copyOnWrite ? copyNode(found) : found;
        if (node) replayNodeAction(node, action);
        else if (options.strict) throw new Error(`no node ${action.node}`);
        if (node && node !== found) snapshot.nodes[index] = node;
      }
    }
  }
  return created;
}

/** The actions that change one node. */
type NodeAction = Exclude<Extract<PlannerAction, { node: string }>, CreateStageOp>;

function replayNodeAction(node: NodeView, action: NodeAction): void {
  switch (action.kind) {
    case 'writeNodeState':
      Object.assign(node.annotations, nodeStateAnnotations(action.skyhook, action.annotation));
      break;
    case 'setNodeStatus':
      node.annotations[nodeAnnotations.status(action.skyhook)] = action.status;
      node.annotations[nodeAnnotations.version(action.skyhook)] = action.operatorVersion;
      node.labels[nodeLabels.status(action.skyhook)] = action.status;
      break;
    case 'setNodeAnnotations':
      setAnnotations(node, action.annotations);
      break;
    case 'cordonNode':
      node.unschedulable = true;
      node.annotations[action.claim] = 'true';
      break;
    case 'releaseNodeCordon': {
      const release = cordonAfterRelease(node, action.claim);
      for (const key of release.remove) delete node.annotations[key];
      if (release.uncordon) node.unschedulable = false;
      break;
    }
    case 'addNodeTaint':
      if (!node.taints.some((t) => t.key === action.taint.key && t.effect === action.taint.effect))
        node.taints.push({ ...action.taint });
      setAnnotations(node, action.annotations ?? {});
      break;
    case 'removeNodeTaint':
      node.taints = node.taints.filter(
        (t) =>
          !(
            t.key === action.taint.key &&
            t.effect === action.taint.effect &&
            (t.value ?? '') === (action.taint.value ?? '')
          ),
      );
      break;
    default:
      // A new action kind must be replayed here, or `skyhook plan` and the tests would silently diverge from the controller.
      unhandled(action);
  }
}

function createdOp(action: CreateStageOp, options: ReplayOptions): StageOpSummary {
  const op: StageOpSummary = {
    name: options.opName(action),
    uid: options.uid(),
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
  return op;
}

function copyNode(node: NodeView): NodeView {
  return { ...node, labels: { ...node.labels }, annotations: { ...node.annotations }, taints: [...node.taints] };
}

function setAnnotations(node: NodeView, annotations: Record<string, string | null>): void {
  for (const [key, value] of Object.entries(annotations)) {
    if (value === null) delete node.annotations[key];
    else node.annotations[key] = value;
  }
}

function unhandled(action: never): never {
  throw new Error(`cannot replay planner action ${JSON.stringify(action)}`);
}
