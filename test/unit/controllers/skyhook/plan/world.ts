/**
 * A tiny in-memory cluster for planner tests: builders for SCRs, nodes and ops, and `applyActions`,
 * which applies the planner's actions with the same interpreter as `skyhook plan` (replay-actions.ts),
 * so tests can run whole rollouts.
 */
import { nodeAnnotations, SKYHOOK_ANNOTATIONS } from '../../../../../src/api/names.js';
import type { Package, Skyhook, SkyhookSpec } from '../../../../../src/api/skyhook.js';
import type { DeploymentPolicy, DeploymentPolicySpec } from '../../../../../src/api/deployment-policy.js';
import type { DisruptionBudget } from '../../../../../src/api/disruption-budget.js';
import { planNextActions } from '../../../../../src/controllers/skyhook/plan/planner.js';
import { replayActions, type ReplaySnapshot } from '../../../../../src/controllers/skyhook/plan/replay-actions.js';
import type {
  CreateStageOp,
  NodeView,
  PlannerAction,
  PlannerInput,
  PlanResult,
  StageOpSummary,
} from '../../../../../src/controllers/skyhook/plan/planner-types.js';

export const SELECTOR_LABEL = 'skyhook.nvidia.com/test-node';

export function pkg(version: string, extra: Partial<Package> = {}): Package {
  return { version, image: 'ghcr.io/nvidia/skyhook/agentless', ...extra };
}

export function scr(name: string, spec: Partial<SkyhookSpec> = {}, annotations: Record<string, string> = {}): Skyhook {
  return {
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'Skyhook',
    metadata: { name, generation: 1, annotations },
    spec: { nodeSelectors: { matchLabels: { [SELECTOR_LABEL]: 'yes' } }, ...spec },
  };
}

export function policy(name: string, spec: DeploymentPolicySpec): DeploymentPolicy {
  return { apiVersion: 'skyhook.nvidia.com/v1alpha1', kind: 'DeploymentPolicy', metadata: { name }, spec };
}

export function node(name: string, index = 0, labels: Record<string, string> = { [SELECTOR_LABEL]: 'yes' }): NodeView {
  return { name, createdAt: 1_000 + index, labels: { ...labels }, annotations: {}, taints: [] };
}

export interface World {
  now: number;
  skyhooks: Skyhook[];
  nodes: NodeView[];
  ops: StageOpSummary[];
  configMaps: Record<string, Record<string, Record<string, string>>>;
  /** Every op ever created, for counting stage runs. */
  created: StageOpSummary[];
  /** Every createStageOp action applied (with interrupt, cordon and drain). */
  creates: CreateStageOp[];
  policies?: DeploymentPolicy[];
  budgets?: DisruptionBudget[];
  /**
   * Actions replace the nodes, SCRs and ConfigMap records they change instead of changing them in
   * place, as informers do (incremental planning tells what changed by identity: plan-cache.ts).
   */
  copyOnWrite?: boolean;
}

export function world(skyhooks: Skyhook[], nodes: NodeView[]): World {
  return { now: 1_000_000, skyhooks, nodes, ops: [], configMaps: {}, created: [], creates: [] };
}

export function plannerInput(w: World): PlannerInput {
  return {
    now: w.now,
    skyhooks: w.skyhooks.map((skyhook) => ({ skyhook, packageConfigMaps: w.configMaps[skyhook.metadata.name!] ?? {} })),
    nodes: w.nodes,
    stageOps: w.ops,
    ...(w.policies ? { deploymentPolicies: w.policies } : {}),
    ...(w.budgets ? { disruptionBudgets: w.budgets } : {}),
  };
}

export function plan(w: World): PlanResult {
  return planNextActions(plannerInput(w));
}

/** Applies actions as the reconciler does (`replayActions`, as `skyhook plan` does); created ops start Running. */
export function applyActions(w: World, actions: PlannerAction[]): void {
  const snapshot: ReplaySnapshot = { nodes: w.nodes, stageOps: w.ops, skyhooks: w.skyhooks, configMaps: w.configMaps };
  try {
    const created = replayActions(snapshot, actions, {
      opName: (action) =>
        opName(action.skyhook, action.node, action.package.name, action.package.version, action.stage),
      uid: () => `uid-${++createdOps}`,
      strict: true,
      ...(w.copyOnWrite ? { copyOnWrite: true } : {}),
    });
    for (const { action, op } of created) {
      w.created.push(op);
      w.creates.push(action);
    }
  } finally {
    w.ops = snapshot.stageOps;
  }
}

/** Uids of created ops: unique across worlds and resets of `created`, like the API server's. */
let createdOps = 0;

export const opName = (skyhook: string, node: string, name: string, version: string, stage: string): string =>
  `${skyhook}-${name}-${version}-${stage}-${node}`;

/** Finishes running ops (all, or those matching `which`). */
export function finishOps(
  w: World,
  phase: 'Completed' | 'Failed' = 'Completed',
  which: (op: StageOpSummary) => boolean = () => true,
): void {
  w.ops = w.ops.map((op) =>
    op.phase === 'Running' && which(op)
      ? { ...op, phase, finishedAt: w.now, ...(phase === 'Failed' ? { restarts: op.restarts + 1 } : {}) }
      : op,
  );
}

/**
 * Ends the running ops as a random history says, one outcome per running op in order (missing ones
 * complete): 0 keeps it running, 1 completes it, 2 fails it with a restart, 3+ fails it without one.
 */
export function settleRunningOps(w: World, outcomes: readonly number[]): void {
  let i = 0;
  w.ops = w.ops.map((op) => {
    if (op.phase !== 'Running') return op;
    const outcome = outcomes[i++] ?? 1;
    if (outcome === 0) return op;
    return {
      ...op,
      phase: outcome === 1 ? 'Completed' : 'Failed',
      restarts: op.restarts + (outcome === 2 ? 1 : 0),
      finishedAt: w.now,
    };
  });
}

/** Plans and applies, finishing every op each round, until nothing is left to do or `rounds` pass. */
export function runToQuiet(w: World, rounds = 50, onRound?: (w: World) => void): number {
  for (let round = 0; round < rounds; round++) {
    const result = plan(w);
    applyActions(w, result.actions);
    onRound?.(w);
    const running = w.ops.some((op) => op.phase === 'Running');
    if (!running && !result.actions.some((a) => a.kind !== 'event')) return round;
    finishOps(w);
    w.now += 1_000;
  }
  return rounds;
}

export function nodeNamed(w: World, name: string): NodeView {
  const found = w.nodes.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no node ${name}`);
  return found;
}

export function nodeStateOf(w: World, nodeName: string, skyhook: string): string | undefined {
  return nodeNamed(w, nodeName).annotations[nodeAnnotations.nodeState(skyhook)];
}

export const pause = { [SKYHOOK_ANNOTATIONS.pause]: 'true' };
export const disable = { [SKYHOOK_ANNOTATIONS.disable]: 'true' };
