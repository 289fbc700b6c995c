/**
 * The interrupt flow's gate over the stage machine's starts (interrupt-flow.ts): a stage of an
 * interrupt package starts only once the node is cordoned, protected pods are gone, the packages
 * merged into one interrupt are all at it, and nothing else runs; otherwise it waits with a reason.
 */
import { packageKey, type NodeState, type PackageStage, type PackageStatus } from '../../../api/node-state.js';
import type { MergedInterrupt } from './interrupt-merge.js';
import type { NodeHold } from './node-holds.js';
import type { NamedPackage } from './package-rules.js';
import type { PackageStep } from './stage-machine.js';

/** Stages of an interrupt package that run cordoned, and those that are drained first. */
export const CORDONED_STAGES: ReadonlySet<PackageStage> = new Set([
  'apply',
  'upgrade',
  'config',
  'interrupt',
  'post-interrupt',
]);
export const DRAINED_STAGES: ReadonlySet<PackageStage> = new Set(['apply', 'upgrade', 'config', 'interrupt']);

/** What the interrupt flow knows when it gates the stage machine's starts. */
export interface InterruptGate {
  withInterrupt: ReadonlyMap<string, NamedPackage>;
  cordonReady: boolean;
  nonInterruptPods: string[];
  merged: MergedInterrupt | undefined;
  waitingMembers: NamedPackage[];
  ownerStarted: boolean;
  interruptMayStart: boolean;
  othersBusy: string[];
  /** The maintenance windows are closed and the node is not interrupted yet: nothing of the flow starts. */
  windowHold?: NodeHold;
}

/** The steps with starts that may not happen yet turned into waits, the holds they report, and the skips written. */
export function gateSteps(
  gate: InterruptGate,
  steps: PackageStep[],
  initial: NodeState,
): { steps: PackageStep[]; state: NodeState; holds: NodeHold[] } {
  let state = initial;
  const holds: NodeHold[] = [];
  const gated = steps.map((step) => {
    const result = gateStep(gate, step, state);
    if (result.hold) holds.push(result.hold);
    state = result.state;
    return result.step;
  });
  return { steps: gated, state, holds };
}

function gateStep(
  gate: InterruptGate,
  step: PackageStep,
  state: NodeState,
): { step: PackageStep; state: NodeState; hold?: NodeHold } {
  if (step.kind !== 'start' || !gate.withInterrupt.has(step.target.name) || step.target.spec === undefined)
    return { step, state };
  const { target } = step;
  if (!CORDONED_STAGES.has(target.stage)) return { step, state };
  const wait = (
    reason: 'window' | 'cordon' | 'non-interrupt-pods' | 'interrupt-merge' | 'ops-running' | 'skipped',
    hold?: NodeHold,
    next: NodeState = state,
  ): { step: PackageStep; state: NodeState; hold?: NodeHold } => {
    const waiting: PackageStep = {
      kind: 'wait',
      name: target.name,
      version: target.version,
      stage: target.stage,
      reason,
    };
    return hold ? { step: waiting, state: next, hold } : { step: waiting, state: next };
  };
  const { merged } = gate;
  if (gate.windowHold) return wait('window', gate.windowHold);
  if (!gate.cordonReady)
    return wait('cordon', { reason: 'Cordoning', detail: `cordoning the node for ${target.name}` });
  if (DRAINED_STAGES.has(target.stage) && gate.nonInterruptPods.length > 0) {
    return wait('non-interrupt-pods', { reason: 'NonInterruptPodsRunning', detail: gate.nonInterruptPods.join(', ') });
  }
  if (target.stage !== 'interrupt' || merged === undefined) return { step, state };
  if (gate.waitingMembers.length > 0) {
    return wait('interrupt-merge', {
      reason: 'InterruptMerge',
      detail: `interrupt waits for ${gate.waitingMembers.map((p) => p.name).join(', ')}`,
    });
  }
  if (target.name !== merged.owner) {
    // Skipped only together with the owner's start, so a held interrupt leaves no skips behind.
    if (!gate.ownerStarted && !gate.interruptMayStart) return wait('interrupt-merge');
    const key = packageKey(target.name, target.version);
    return wait('skipped', undefined, { ...state, [key]: skippedEntry(state[key]!) });
  }
  if (gate.othersBusy.length > 0) {
    return wait('ops-running', {
      reason: 'StagesRunning',
      detail: `interrupt waits for ${gate.othersBusy.join(', ')}`,
    });
  }
  return { step: { kind: 'start', target: { ...target, interrupt: merged.interrupt } }, state };
}

function skippedEntry(entry: PackageStatus): PackageStatus {
  const { restarts: _dropped, ...rest } = entry;
  return { ...rest, stage: 'interrupt', state: 'skipped' };
}
