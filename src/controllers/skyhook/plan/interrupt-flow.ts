/**
 * The interrupt flow of one node for one SCR, layered over the stage machine's steps: a package
 * whose cycle ends in an interrupt runs cordoned (cordon → wait while podNonInterruptLabels pods run
 * → drain → apply/upgrade → config → interrupt → post-interrupt), and the interrupts of the packages
 * due together are merged so the node is interrupted once. Starts that may not happen yet become
 * waits with a reason the planner shows; the cordon is taken here and released by the planner when
 * the node is complete.
 */
import type { LabelSelector } from '../../../api/k8s-schemas.js';
import type { SkyhookSpec } from '../../../api/skyhook.js';
import { cordonClaim, isForeignCordon } from '../../../jobs/cordon/claims.js';
import { drainBlockersFromMessage, stageDrainOptions } from './drain-settings.js';
import { mergeInterrupts, packageInterrupts, type MergedInterrupt } from './interrupt-merge.js';
import { selectorMatches } from '../../../api/label-selector.js';
import { packageKey, type NodeState, type PackageStatus } from '../../../api/node-state.js';
import type { NodeHold } from './node-holds.js';
import { hasInterrupt, namedPackages, type NamedPackage } from './package-rules.js';
import type { CordonNode, CreateStageOp, DrainBlocker, NodeView, StageOpSummary } from './planner-types.js';
import { isLive, type NodePackagesPlan, type PackageStep } from './stage-machine.js';
import { CORDONED_STAGES, DRAINED_STAGES, gateSteps } from './interrupt-gate.js';
import type { DisruptionLedger } from '../../disruption/budget-rules.js';
import { takeClusterSlot } from './cluster-budget.js';

export interface InterruptFlowInput {
  skyhook: string;
  spec: SkyhookSpec;
  node: NodeView;
  state: NodeState;
  plan: NodePackagesPlan;
  configUpdates: Record<string, string[]>;
  /** This SCR's ops on the node (any phase). */
  ops: StageOpSummary[];
  /** Live stage ops of other SCRs on the node. */
  otherLiveOps: StageOpSummary[];
  /** Set while the maintenance windows are closed: a node not interrupted yet waits with this hold. */
  windowHold?: NodeHold;
  /** The cluster-wide DisruptionBudgets of this planning run; a cordon planned takes a slot (absent: none). */
  ledger?: DisruptionLedger;
}

export interface InterruptFlow {
  plan: NodePackagesPlan;
  /** The state with `{interrupt, skipped}` written for packages whose interrupt is merged into another's. */
  state: NodeState;
  cordon?: CordonNode;
  /** NonInterruptPodsRunning, DrainBlocked, Cordoning, InterruptMerge or StagesRunning. */
  hold?: NodeHold;
  /** `<ns>/<name>` of running pods matching podNonInterruptLabels. */
  nonInterruptPods: string[];
  drainBlockers: DrainBlocker[];
  /** Sets cordon and drain on the ops of packages with an interrupt. */
  decorate: (op: CreateStageOp) => CreateStageOp;
  /** The flow waits for a maintenance window (windowHold applied). */
  windowHeld?: true;
}

/**
 * The packages whose cycle ends in an interrupt, and those of them with work to do or under way
 * now (not done, not waiting for their parents): while any is active the node runs cordoned.
 */
export function activeInterrupts(
  spec: SkyhookSpec,
  plan: NodePackagesPlan,
  configUpdates: Record<string, string[]>,
): { withInterrupt: Map<string, NamedPackage>; active: NamedPackage[] } {
  const withInterrupt = new Map(
    namedPackages(spec.packages)
      .filter((pkg) => hasInterrupt(pkg, configUpdates[pkg.name]))
      .map((pkg) => [pkg.name, pkg]),
  );
  const stepOf = (pkg: NamedPackage): PackageStep | undefined =>
    plan.steps.find((step) => stepPackage(step) === packageKey(pkg.name, pkg.version));
  return { withInterrupt, active: [...withInterrupt.values()].filter((pkg) => isActive(stepOf(pkg))) };
}

export function planInterruptFlow(input: InterruptFlowInput): InterruptFlow {
  const { spec, node, configUpdates } = input;
  const { withInterrupt, active } = activeInterrupts(spec, input.plan, configUpdates);
  const state = input.state;
  const members = active.filter((pkg) => !isPastInterrupt(state[packageKey(pkg.name, pkg.version)]));
  const merged = mergedFor(members, state, configUpdates);
  // Outside the windows no node newly starts an interrupt; one already under way finishes.
  const windowHold =
    input.windowHold && active.length > 0 && !flowStarted(input, active) ? input.windowHold : undefined;
  const { cordon, cordonReady, budgetHold } = windowHold
    ? { cordon: undefined, cordonReady: false, budgetHold: undefined }
    : flowCordon(input, active);
  const nonInterruptPods = protectedPods(spec.podNonInterruptLabels, node);
  const waitingMembers = members.filter((pkg) => !atInterrupt(state[packageKey(pkg.name, pkg.version)]));
  const othersBusy = busyOthers(input, new Set(members.map((pkg) => packageKey(pkg.name, pkg.version))));
  const owner = merged === undefined ? undefined : members.find((pkg) => pkg.name === merged.owner);
  const ownerEntry = owner === undefined ? undefined : state[packageKey(owner.name, owner.version)];
  const gated = gateSteps(
    {
      withInterrupt,
      cordonReady,
      nonInterruptPods,
      merged,
      waitingMembers,
      ownerStarted: ownerEntry?.stage === 'interrupt' && ownerEntry.state !== 'skipped',
      interruptMayStart:
        cordonReady && nonInterruptPods.length === 0 && waitingMembers.length === 0 && othersBusy.length === 0,
      othersBusy,
      ...(windowHold ? { windowHold } : {}),
    },
    input.plan.steps,
    state,
  );
  const drainBlockers = input.ops
    .filter((op) => !op.deleting && (isLive(op) || op.phase === 'Failed'))
    .flatMap((op) => op.drainBlockers ?? drainBlockersFromMessage(op.message));
  const hold = flowHold(budgetHold ? [budgetHold, ...gated.holds] : gated.holds, drainBlockers);
  const drain = stageDrainOptions(spec.drainConfig);
  const decorate = (op: CreateStageOp): CreateStageOp => {
    if (!withInterrupt.has(op.package.name) || !CORDONED_STAGES.has(op.stage)) return op;
    return DRAINED_STAGES.has(op.stage) ? { ...op, cordon: true, drain: { ...drain } } : { ...op, cordon: true };
  };
  const flow: InterruptFlow = {
    plan: { ...input.plan, steps: gated.steps },
    state: gated.state,
    nonInterruptPods,
    drainBlockers,
    decorate,
  };
  if (cordon) flow.cordon = cordon;
  if (hold) flow.hold = hold;
  if (windowHold) flow.windowHeld = true;
  return flow;
}

/**
 * Cordon the node for the active interrupt packages (or share another SCR's cordon); ready once
 * cordoned. A cordon that newly disrupts the node takes a slot of the cluster budgets first; without
 * one the node waits (ClusterBudget) and nothing that needs the cordon starts.
 */
function flowCordon(
  input: InterruptFlowInput,
  active: NamedPackage[],
): { cordon?: CordonNode; cordonReady: boolean; budgetHold?: NodeHold } {
  const { node } = input;
  if (active.length === 0) return { cordonReady: true };
  const claim = cordonClaim(input.skyhook);
  const refused = takeClusterSlot(input.ledger, node);
  if (refused) return { cordonReady: false, budgetHold: refused };
  if (node.unschedulable !== true) {
    const reason = `packages with interrupts: ${active.map((p) => p.name).join(', ')}`;
    return { cordon: { kind: 'cordonNode', node: node.name, claim, reason }, cordonReady: false };
  }
  if (!Object.hasOwn(node.annotations, claim) && !isForeignCordon(node)) {
    // Another SCR holds the cordon: add our claim so its release does not uncordon under us.
    const reason = 'sharing the cordon of another Skyhook';
    return { cordon: { kind: 'cordonNode', node: node.name, claim, reason }, cordonReady: true };
  }
  return { cordonReady: true };
}

/**
 * The node is already interrupted for this SCR: it holds this SCR's cordon claim, or (under a cordon
 * someone else made, where we take no claim) a stage of the flow ran or runs.
 */
function flowStarted(input: InterruptFlowInput, active: NamedPackage[]): boolean {
  const { node, state } = input;
  if (Object.hasOwn(node.annotations, cordonClaim(input.skyhook))) return true;
  if (!isForeignCordon(node)) return false;
  const activeKeys = new Set(active.map((pkg) => packageKey(pkg.name, pkg.version)));
  if (input.ops.some((op) => isLive(op) && activeKeys.has(packageKey(op.package, op.version)))) return true;
  return [...activeKeys].some((key) => {
    const entry = state[key];
    if (entry === undefined || !CORDONED_STAGES.has(entry.stage)) return false;
    // A config cycle or version change reopens an entry (in_progress) before anything ran.
    return entry.state === 'erroring' || (entry.state === 'complete' && entry.stage !== 'post-interrupt');
  });
}

/**
 * An interrupt cuts off whatever else runs on the node: it waits for other ops, and for stages
 * other packages would start in this same pass.
 */
function busyOthers(input: InterruptFlowInput, memberKeys: ReadonlySet<string>): string[] {
  return [
    ...[...input.ops.filter(isLive), ...input.otherLiveOps]
      .filter((op) => op.skyhook !== input.skyhook || !memberKeys.has(packageKey(op.package, op.version)))
      .map((op) => op.name),
    ...input.plan.steps
      .filter((step) => (step.kind === 'start' || step.kind === 'replace') && !memberKeys.has(stepPackage(step)))
      .map(stepPackage),
  ];
}

/** The hold to show: pods the SCR protects first, then a blocked drain, then the first wait's. */
function flowHold(holds: NodeHold[], drainBlockers: DrainBlocker[]): NodeHold | undefined {
  const all =
    drainBlockers.length > 0
      ? [
          {
            reason: 'DrainBlocked',
            detail: drainBlockers.map((b) => `${b.namespace}/${b.name} (${b.detail ?? b.reason})`).join(', '),
          },
          ...holds,
        ]
      : holds;
  return all.find((hold) => hold.reason === 'NonInterruptPodsRunning') ?? all[0];
}

/**
 * The merged interrupt of the packages due now. Once one of them is at its interrupt stage it owns
 * the interrupt already started (its op carries what was merged then).
 */
function mergedFor(
  members: NamedPackage[],
  state: NodeState,
  configUpdates: Record<string, string[]>,
): MergedInterrupt | undefined {
  const started = members.find((pkg) => {
    const entry = state[packageKey(pkg.name, pkg.version)];
    return entry?.stage === 'interrupt' && entry.state !== 'skipped' && entry.state !== 'complete';
  });
  const merged = mergeInterrupts(
    members.map((pkg) => ({ package: pkg.name, interrupts: packageInterrupts(pkg, configUpdates[pkg.name]) })),
  );
  return started && merged ? { owner: started.name, interrupt: merged.interrupt } : merged;
}

/** The step of a spec package (`name|version`); uninstalls of other versions have their own keys. */
function stepPackage(step: PackageStep): string {
  return step.kind === 'done' || step.kind === 'wait'
    ? packageKey(step.name, step.version)
    : packageKey(step.target.name, step.target.version);
}

/** Work the package can do now or is doing (not done, not waiting for its parents). */
function isActive(step: PackageStep | undefined): boolean {
  if (step === undefined || step.kind === 'done') return false;
  return !(step.kind === 'wait' && (step.reason === 'dependencies' || step.reason === 'cycle'));
}

const isPastInterrupt = (entry: PackageStatus | undefined): boolean =>
  entry !== undefined &&
  (entry.stage === 'post-interrupt' || (entry.stage === 'interrupt' && entry.state === 'complete'));

/** Config done (the interrupt is next) or the interrupt under way. */
const atInterrupt = (entry: PackageStatus | undefined): boolean =>
  entry !== undefined &&
  ((entry.stage === 'config' && entry.state === 'complete') ||
    (entry.stage === 'interrupt' && entry.state !== 'complete'));

/**
 * Running or pending pods matching the selector or opted in by their annotation (every SCR protects
 * those); an empty selector protects only opted-in pods. Unknown pods hold an SCR with a selector.
 */
export function protectedPods(selector: LabelSelector | undefined, node: NodeView): string[] {
  const empty =
    Object.keys(selector?.matchLabels ?? {}).length === 0 && (selector?.matchExpressions ?? []).length === 0;
  if (!empty && node.pods === undefined) return ['(pods on the node not known yet)'];
  return (node.pods ?? [])
    .filter(
      (pod) =>
        (pod.phase === 'Running' || pod.phase === 'Pending') &&
        (pod.nonInterruptible === true || (!empty && selectorMatches(selector, pod.labels))),
    )
    .map((pod) => `${pod.namespace}/${pod.name}`)
    .sort();
}

/**
 * `{interrupt, skipped}` entries wait for the owner's interrupt; if it is gone (its package went
 * back to config on a config change), they return to `{config, complete}` and join the next merge.
 */
export function releaseOrphanedSkips(state: NodeState, ops: StageOpSummary[]): NodeState {
  const skipped = Object.entries(state).filter(([, entry]) => entry.stage === 'interrupt' && entry.state === 'skipped');
  if (skipped.length === 0) return state;
  const ownerPending = Object.values(state).some(
    (entry) => entry.stage === 'interrupt' && entry.state !== 'skipped' && entry.state !== 'complete',
  );
  if (ownerPending || ops.some((op) => isLive(op) && op.stage === 'interrupt')) return state;
  const next = { ...state };
  for (const [key, entry] of skipped) next[key] = { ...entry, stage: 'config', state: 'complete' };
  return next;
}
