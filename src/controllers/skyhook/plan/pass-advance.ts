/**
 * The middle phases of a pass (plan-skyhook.ts): the rollout admits nodes within its budget, the
 * admitted ones move forward (interrupt flow, stages started), the others get the hold that explains
 * why they wait, and finished ops past their retention go. Each phase returns new node records.
 */
import { IGNORE_NODE_LABEL } from '../../../api/names.js';
import type { SkyhookStatusValue } from '../../../api/node-state.js';
import { activeInterrupts, type InterruptFlowInput, planInterruptFlow } from './interrupt-flow.js';
import { clusterBudgetRefusal, rolloutOrClusterHold } from './cluster-budget.js';
import { OUTSIDE_WINDOW_REASON, windowRequeueMs } from './maintenance-windows.js';
import { isIgnored, untoleratedTaints } from './node-eligibility.js';
import { malformedHold, POD_WAIT, PRIORITY_WAIT, type NodeHold } from './node-holds.js';
import { podsHoldingInterrupt } from './non-interrupt-wait.js';
import { PACKAGE_TRUST_REFUSED, withPinnedDigest } from './package-trust.js';
import { advanceAdmittedNode, deleteOps, expiredOps, type NodeWork } from './node-work.js';
import type { CordonNode, CreateStageOp, DeleteStageOp, DrainBlocker, NodeView } from './planner-types.js';
import type { RolloutNode } from './rollout-admission.js';
import { planRollout, type RolloutPlan } from './rollout-plan.js';
import type { DecidedNodes } from './pass-nodes.js';
import type { SkyhookPass } from './skyhook-pass.js';
import { missingPolicyMessage } from './skyhook-status-update.js';
import { isLive, type NodePackagesPlan } from './stage-machine.js';

export interface Admission {
  rollout: RolloutPlan;
  /** What the rollout knew of each node. */
  nodes: Map<string, RolloutNode>;
  /** The non-interruptible pods holding each node that `waitsForPods`. */
  podHolds: Map<string, string[]>;
}

/**
/**
 * Nodes still `waiting` are ready unless an earlier SCR holds them, all they could do is start an
 * interrupt outside the maintenance windows (so they take no batch slot from nodes that can work), or
 * an idle node's interrupt would newly disrupt it while a cluster budget has no room; the rollout
 * admits within its budget, nodes held by non-interruptible pods last (non-interrupt-wait.ts).
 */
/**
 * `freshBatches`: a package version change was written in this pass and the batch state resets on
 * it: the batches start over before this pass picks one (upstream resets before it batches), so the
 * batch picked now is the first of the new version's and is recorded as such.
 */
export function admit(
  pass: SkyhookPass,
  decided: DecidedNodes,
  configUpdates: Record<string, string[]>,
  freshBatches = false,
): Admission {
  const { nodeStatus } = decided;
  const priority = pass.scr.status?.nodePriority ?? {};
  const ready = (work: NodeWork, index: number): boolean =>
    nodeStatus[work.node.name] === 'waiting' &&
    pass.gates.blockersOn(work.node.name).length === 0 &&
    !onlyWindowHeldWork(pass, work, decided.plans[index]!, configUpdates);
  const podHolds = new Map<string, string[]>();
  const nodes = new Map<string, RolloutNode>(
    decided.works.map((work, index) => {
      const complete = nodeStatus[work.node.name] === 'complete';
      const gate = decided.gates.get(work.node.name);
      const busy = work.ops.some(isLive);
      const isReady =
        !pass.frozen &&
        ready(work, index) &&
        (busy || budgetRefusal(pass, work, decided.plans[index]!, configUpdates) === undefined);
      const pods =
        busy || !isReady ? [] : podsHoldingInterrupt(pass.spec, work.node, decided.plans[index]!, configUpdates);
      if (pods.length > 0) podHolds.set(work.node.name, pods);
      return [
        work.node.name,
        {
          node: work.node.name,
          busy,
          waitsForPods: pods.length > 0,
          holdsCordon: !complete && Object.hasOwn(work.node.annotations, pass.claim),
          ready: isReady,
          sticky:
            priority[work.node.name] !== undefined ||
            work.record.status === 'in_progress' ||
            work.record.status === 'erroring',
          complete,
          failed: gate?.status === 'erroring' || Object.values(work.state).some((entry) => entry.state === 'erroring'),
          gating: gate !== undefined && gate.status !== 'complete',
        },
      ];
    }),
  );
  const rollout = planRollout({
    spec: pass.spec,
    ...(pass.policy ? { policy: pass.policy.spec } : {}),
    targeted: pass.targeted,
    nodes,
    previous: freshBatches ? undefined : pass.scr.status?.compartmentStatuses,
    complete: decided.works.every((work) => nodeStatus[work.node.name] === 'complete'),
  });
  return { rollout, nodes, podHolds };
}

export interface AdvancedNodes {
  works: NodeWork[];
  /** Admitted nodes turn in_progress (or erroring); the others keep their status. */
  nodeStatus: Record<string, SkyhookStatusValue>;
  /** When each node in progress started (admitted nodes join). */
  priority: Record<string, string>;
  holds: Map<string, NodeHold>;
  drainBlockers: Map<string, DrainBlocker[]>;
  cordons: CordonNode[];
  creates: CreateStageOp[];
  deletes: DeleteStageOp[];
  requeueAfterMs?: number;
  /** The next window opening, while a node waits for one to start an interrupt. */
  windowOpensAt?: number;
}

/** Stray ops go; admitted nodes take their next stages; the others are told what holds them. */
export function advanceAdmittedNodes(
  pass: SkyhookPass,
  decided: DecidedNodes,
  admission: Admission,
  configUpdates: Record<string, string[]>,
): AdvancedNodes {
  const { name, spec, settings, now } = pass;
  const { rollout } = admission;
  const out: AdvancedNodes = {
    works: [],
    nodeStatus: { ...decided.nodeStatus },
    priority: { ...(pass.scr.status?.nodePriority ?? {}) },
    holds: new Map(),
    drainBlockers: new Map(),
    cordons: [],
    creates: [],
    deletes: [],
  };
  // Nodes held by their pods go last, so whatever they take (a cordon, a cluster budget's slot) goes
  // to the nodes that can proceed first; their works keep their place.
  const works: NodeWork[] = [];
  // A stable partition (sorting 5000 indices by a comparator was a tenth of an incremental pass).
  const order: number[] = [];
  const held: number[] = [];
  for (const [index, work] of decided.works.entries()) {
    (admission.podHolds.has(work.node.name) ? held : order).push(index);
  }
  order.push(...held);
  for (const index of order) {
    const decidedWork = decided.works[index]!;
    const plan = decided.plans[index]!;
    const node = decidedWork.node.name;
    const strays = deleteOps(decidedWork, pass.frozen ? [] : plan.strayOps, 'no package needs this stage now');
    const work = strays.work;
    out.deletes.push(...strays.deletes);
    if (!rollout.admitted.has(node)) {
      works[index] = work;
      const gate = decided.gates.get(node);
      const clusterHold = budgetRefusal(pass, work, plan, configUpdates);
      const hold = gate?.hold ?? holdOutside(pass, admission, work, out.nodeStatus[node]!, clusterHold);
      if (hold) out.holds.set(node, hold);
      if (hold?.reason === OUTSIDE_WINDOW_REASON) waitForWindow(pass, work.node, out);
      out.requeueAfterMs = earliest(out.requeueAfterMs, gate?.requeueAfterMs);
      // A strategy counts erroring nodes as failed; they show erroring until a batch picks them again.
      const strategic = rollout.compartments.some((c) => c.strategy !== undefined && c.nodes.includes(node));
      if (strategic && out.nodeStatus[node] === 'waiting' && admission.nodes.get(node)!.failed)
        out.nodeStatus[node] = 'erroring';
      continue;
    }
    // Only here, where the cordon is planned, does the flow take cluster-budget slots.
    const flow = planInterruptFlow({
      ...flowInput(pass, work, plan, configUpdates),
      ...(pass.ledger ? { ledger: pass.ledger } : {}),
    });
    if (flow.cordon) out.cordons.push(flow.cordon);
    if (flow.hold) out.holds.set(node, flow.hold);
    if (flow.windowHeld) waitForWindow(pass, work.node, out);
    if (flow.drainBlockers.length > 0) out.drainBlockers.set(node, flow.drainBlockers);
    const advanced = advanceAdmittedNode(
      { ...work, state: flow.state },
      flow.plan,
      name,
      spec.serial === true,
      settings,
      now,
    );
    works[index] = { ...work, state: advanced.state, ops: advanced.ops };
    out.creates.push(...advanced.creates.map(flow.decorate).map(withPinnedDigest(pass.trust)));
    out.deletes.push(...advanced.deletes);
    out.requeueAfterMs = earliest(out.requeueAfterMs, advanced.requeueAfterMs);
    out.nodeStatus[node] = Object.values(advanced.state).some((entry) => entry.state === 'erroring')
      ? 'erroring'
      : 'in_progress';
    out.priority[node] ??= new Date(now).toISOString();
  }
  out.works = works;
  return out;
}

/** The interrupt flow's input for an admitted (or candidate) node. */
function flowInput(
  pass: SkyhookPass,
  work: NodeWork,
  plan: NodePackagesPlan,
  configUpdates: Record<string, string[]>,
): InterruptFlowInput {
  const { name } = pass;
  const windows = pass.windowsOf(work.node);
  return {
    skyhook: name,
    spec: pass.spec,
    node: work.node,
    state: work.state,
    plan,
    configUpdates,
    ops: work.ops,
    otherLiveOps: pass.opIndex.allOnNode(work.node.name).filter((op) => op.skyhook !== name && isLive(op)),
    ...(windows.open ? {} : { windowHold: windows.hold }),
  };
}

/** Outside the windows, a node whose every next step would start an interrupt has nothing to do yet. */
function onlyWindowHeldWork(
  pass: SkyhookPass,
  work: NodeWork,
  plan: NodePackagesPlan,
  configUpdates: Record<string, string[]>,
): boolean {
  if (pass.windowsOf(work.node).open || work.record.malformed) return false;
  const flow = planInterruptFlow(flowInput(pass, work, plan, configUpdates));
  return flow.windowHeld === true && !flow.plan.steps.some((step) => step.kind !== 'done' && step.kind !== 'wait');
}

/** Woken by a timer at the opening (not by polling); the status shows the earliest opening. */
function waitForWindow(pass: SkyhookPass, node: NodeView, out: AdvancedNodes): void {
  const windows = pass.windowsOf(node);
  if (windows.open) return;
  out.requeueAfterMs = earliest(out.requeueAfterMs, windowRequeueMs(windows.nextOpen, pass.now));
  out.windowOpensAt = earliest(out.windowOpensAt, windows.nextOpen);
}

/** Why a node the rollout did not admit waits, naming what holds it. */
function holdOutside(
  pass: SkyhookPass,
  admission: Admission,
  work: NodeWork,
  status: SkyhookStatusValue,
  clusterHold: NodeHold | undefined,
): NodeHold | undefined {
  if (status === 'complete' || status === 'paused' || status === 'disabled') return undefined;
  if (work.record.malformed) return malformedHold(pass.name, work.record.malformed);
  if (isIgnored(work.node)) return { reason: 'NodeIgnored', detail: `label ${IGNORE_NODE_LABEL}=true` };
  const taints = untoleratedTaints(work.node, pass.spec, pass.settings.runtimeRequiredTaint);
  if (taints.length > 0)
    return {
      reason: 'TaintNotTolerable',
      detail: taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', '),
    };
  if (pass.missingPolicy !== undefined)
    return { reason: 'DeploymentPolicyNotFound', detail: missingPolicyMessage(pass.missingPolicy) };
  if (pass.problems.length > 0) return { reason: 'InvalidSpec', detail: pass.problems.join('; ') };
  if (pass.trustRefusals.length > 0) return { reason: PACKAGE_TRUST_REFUSED, detail: pass.trustRefusals.join('; ') };
  const blockers = pass.gates.blockersOn(work.node.name);
  if (blockers.length > 0) return { reason: PRIORITY_WAIT, detail: [...new Set(blockers)].join(', ') };
  const windows = pass.windowsOf(work.node);
  if (!windows.open && status === 'waiting' && !admission.nodes.get(work.node.name)?.ready) return windows.hold;
  // Its own pods hold it first: even with a free slot it would wait for them.
  const pods = admission.podHolds.get(work.node.name);
  if (pods !== undefined) return { reason: POD_WAIT, detail: pods.join(', ') };
  return rolloutOrClusterHold(admission.rollout, admission.nodes, work.node.name, clusterHold);
}

/** The ClusterBudget hold of a node whose interrupt would newly disrupt it while a cluster budget has no room. */
function budgetRefusal(
  pass: SkyhookPass,
  work: NodeWork,
  plan: NodePackagesPlan,
  configUpdates: Record<string, string[]>,
): NodeHold | undefined {
  if (pass.ledger === undefined || pass.ledger.empty) return undefined;
  if (activeInterrupts(pass.spec, plan, configUpdates).active.length === 0) return undefined;
  return clusterBudgetRefusal(pass.ledger, work.node);
}

export interface ExpiredOps {
  works: NodeWork[];
  deletes: DeleteStageOp[];
  requeueAfterMs?: number;
}

/** Finished ops go once their Job's retention has passed (the Job itself is gone by then). */
export function expireFinishedOps(pass: SkyhookPass, works: NodeWork[]): ExpiredOps {
  const out: ExpiredOps = { works: [], deletes: [] };
  for (const work of works) {
    if (work.record.malformed) {
      out.works.push(work);
      continue;
    }
    const retention = expiredOps(work, pass.settings.finishedOpRetentionMs, pass.now);
    const expired = deleteOps(work, retention.expired, 'finished and kept for the retention period');
    out.works.push(expired.work);
    out.deletes.push(...expired.deletes);
    if (retention.nextExpiry !== undefined)
      out.requeueAfterMs = earliest(out.requeueAfterMs, retention.nextExpiry - pass.now);
  }
  return out;
}

/** The sooner of two optional delays. */
export function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}
