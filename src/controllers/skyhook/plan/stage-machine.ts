/**
 * The stage machine for one node × one SCR: from the spec packages, the node's package entries and
 * the SCR's stage ops on the node, what each package does next. Uninstalls (of removed packages and
 * of the old version in a downgrade) come first and wait for nothing; spec packages wait for their
 * own dependsOn parents only (upstream waits for every root, a known quirk we do not copy). Deciding
 * is separate from acting: the planner turns `start` into an op only where the budget allows.
 */
import type { Interrupt, Package } from '../../../api/skyhook.js';
import { dependencyCycles } from '../../../api/spec-checks.js';
import { packageKey, type NodeState, type PackageStage, type PackageStatus } from '../../../api/node-state.js';
import {
  hasInterrupt,
  isNodeComplete,
  isPackageComplete,
  namedPackages,
  nextStage,
  packageInterrupt,
  retryDelayMs,
  type NamedPackage,
} from './package-rules.js';
import type { StageOpSummary } from './planner-types.js';

export interface NodePackagesInput {
  packages: Record<string, Package> | undefined;
  /** The node's entries for this SCR, after op outcomes and version changes were applied. */
  state: NodeState;
  configUpdates: Record<string, string[]>;
  /** This SCR's stage ops on this node, with outcomes already recorded. */
  ops: StageOpSummary[];
  now: number;
  retry: { baseMs: number; maxMs: number };
}

/** A stage to run: the op to create and the entry to write. */
export interface StageTarget {
  name: string;
  version: string;
  image: string;
  containerSHA?: string;
  stage: PackageStage;
  /** The spec package; absent for the uninstall of a version no longer in the spec. */
  spec?: Package;
  /** The restart count to keep: a retry of an erroring stage continues counting. */
  restarts: number;
  interrupt?: Interrupt;
}

export type WaitReason =
  | 'dependencies'
  | 'cycle'
  | 'skipped'
  | 'deleting'
  | 'backoff'
  /** Interrupt flow (interrupt-flow.ts): no maintenance window is open and the node is not interrupted yet. */
  | 'window'
  /** Interrupt flow (interrupt-flow.ts): the cordon is not in place yet. */
  | 'cordon'
  /** Pods matching podNonInterruptLabels run on the node. */
  | 'non-interrupt-pods'
  /** Other packages of the merged interrupt have not reached it yet. */
  | 'interrupt-merge'
  /** Other stage ops still run on the node; an interrupt would cut them off. */
  | 'ops-running';

export type PackageStep =
  | { kind: 'done'; name: string; version: string }
  | { kind: 'start'; target: StageTarget }
  | { kind: 'running'; target: StageTarget; op: StageOpSummary }
  /** A finished, failed-for-good or outdated op holds the stage's name: delete it first. */
  | { kind: 'replace'; target: StageTarget; op: StageOpSummary; reason: string }
  | { kind: 'wait'; name: string; version: string; stage?: PackageStage; reason: WaitReason; until?: number };

export interface NodePackagesPlan {
  steps: PackageStep[];
  /** Unfinished ops that no package wants any more (spec or state moved on): delete them. */
  strayOps: StageOpSummary[];
  complete: boolean;
}

/**
 * Runs for every targeted node of every SCR on every pass (5000 times a pass at 1000 nodes × 5 SCRs),
 * so it allocates only what it returns: the rare parts (open uninstalls, stray ops, cycles) are
 * worked out only when there is something to find.
 */
export function planNodePackages(input: NodePackagesInput): NodePackagesPlan {
  const { state, packages, configUpdates } = input;
  const steps: PackageStep[] = [];
  for (const entry of openUninstalls(state)) steps.push(stepFor(input, uninstallTarget(entry, packages?.[entry.name])));
  let cyclic: Set<string> | undefined;
  const named = namedPackages(packages);
  for (const pkg of named) {
    const entry = state[packageKey(pkg.name, pkg.version)];
    if (entry && isOpenUninstall(entry)) continue;
    const changedKeys = configUpdates[pkg.name];
    const withInterrupt = hasInterrupt(pkg, changedKeys);
    const stage = wantedStage(entry, withInterrupt);
    if (stage === 'done') {
      steps.push({ kind: 'done', name: pkg.name, version: pkg.version });
      continue;
    }
    if (stage === 'skipped') {
      steps.push({ kind: 'wait', name: pkg.name, version: pkg.version, stage: entry?.stage, reason: 'skipped' });
      continue;
    }
    const target = specTarget(
      pkg,
      stage,
      entry,
      stage === 'interrupt' ? packageInterrupt(pkg, changedKeys) : undefined,
    );
    const running = liveOp(input.ops, target);
    if (running === undefined && !parentsComplete(pkg, input)) {
      // Only needed to name why the package waits.
      cyclic ??= new Set(dependencyCycles(packages ?? {}).flat());
      steps.push({
        kind: 'wait',
        name: pkg.name,
        version: pkg.version,
        stage,
        reason: cyclic.has(pkg.name) ? 'cycle' : 'dependencies',
      });
      continue;
    }
    steps.push(stepFor(input, target, entry));
  }
  return {
    steps,
    strayOps: strayOps(input.ops, steps),
    complete: isNodeComplete(state, named, configUpdates),
  };
}

/** The node's open uninstalls, in key order. */
function openUninstalls(state: NodeState): PackageStatus[] {
  let keys: string[] | undefined;
  for (const key in state) {
    if (!isOpenUninstall(state[key]!)) continue;
    keys ??= [];
    keys.push(key);
  }
  return keys === undefined ? [] : keys.sort().map((key) => state[key]!);
}

/** Live ops that no step runs or replaces. */
function strayOps(ops: StageOpSummary[], steps: PackageStep[]): StageOpSummary[] {
  if (ops.length === 0) return [];
  const kept = new Set<StageOpSummary>();
  for (const step of steps) if ('op' in step) kept.add(step.op);
  return ops.filter((op) => isLive(op) && !op.deleting && !kept.has(op));
}

/** The stage a package is at or goes to next; `done` when its cycle is complete. */
export function wantedStage(
  entry: PackageStatus | undefined,
  withInterrupt: boolean,
): PackageStage | 'done' | 'skipped' {
  if (entry === undefined) return 'apply';
  if (entry.state === 'skipped') return 'skipped';
  if (entry.state === 'complete') return nextStage(entry.stage, withInterrupt) ?? 'done';
  return entry.stage;
}

function stepFor(input: NodePackagesInput, target: StageTarget, entry?: PackageStatus): PackageStep {
  const matching = input.ops.filter(
    (op) => op.package === target.name && op.version === target.version && op.stage === target.stage,
  );
  const deleting = matching.find((op) => op.deleting);
  if (deleting)
    return { kind: 'wait', name: target.name, version: target.version, stage: target.stage, reason: 'deleting' };
  const live = matching.find(isLive);
  if (live)
    return live.stale
      ? { kind: 'replace', target, op: live, reason: 'op no longer matches the spec' }
      : { kind: 'running', target, op: live };
  const finished = matching[0];
  if (finished === undefined) return { kind: 'start', target };
  if (finished.phase === 'Failed' && entry?.state === 'erroring') {
    const until =
      (finished.finishedAt ?? input.now) + retryDelayMs(entry.restarts ?? 1, input.retry.baseMs, input.retry.maxMs);
    if (input.now < until)
      return {
        kind: 'wait',
        name: target.name,
        version: target.version,
        stage: target.stage,
        reason: 'backoff',
        until,
      };
    return { kind: 'replace', target, op: finished, reason: 'retrying the failed stage' };
  }
  return { kind: 'replace', target, op: finished, reason: 'running the stage again' };
}

function parentsComplete(pkg: NamedPackage, input: NodePackagesInput): boolean {
  return Object.entries(pkg.dependsOn ?? {}).every(([parent, version]) => {
    const spec = input.packages?.[parent];
    if (spec === undefined) return false;
    return isPackageComplete(
      input.state[packageKey(parent, version)],
      spec,
      hasInterrupt(spec, input.configUpdates[parent]),
    );
  });
}

function specTarget(
  pkg: NamedPackage,
  stage: PackageStage,
  entry: PackageStatus | undefined,
  interrupt: Interrupt | undefined,
): StageTarget {
  const retrying = entry?.stage === stage && entry.state === 'erroring';
  const target: StageTarget = {
    name: pkg.name,
    version: pkg.version,
    image: pkg.image,
    stage,
    spec: pkg,
    restarts: retrying ? (entry.restarts ?? 0) : 0,
  };
  if (pkg.containerSHA) target.containerSHA = pkg.containerSHA;
  if (interrupt) target.interrupt = interrupt;
  return target;
}

/** Uninstall runs the old version's image; the spec is used only when it is still that version. */
function uninstallTarget(entry: PackageStatus, spec: Package | undefined): StageTarget {
  const target: StageTarget = {
    name: entry.name,
    version: entry.version,
    image: entry.image,
    stage: entry.stage,
    restarts: entry.state === 'erroring' ? (entry.restarts ?? 0) : 0,
  };
  if (entry.containerSHA) target.containerSHA = entry.containerSHA;
  if (spec?.version === entry.version) target.spec = spec;
  return target;
}

function isOpenUninstall(entry: PackageStatus): boolean {
  return (
    (entry.stage === 'uninstall' || entry.stage === 'uninstall-interrupt') &&
    entry.state !== 'complete' &&
    entry.state !== 'skipped'
  );
}

function liveOp(ops: StageOpSummary[], target: StageTarget): StageOpSummary | undefined {
  return ops.find(
    (op) => isLive(op) && op.package === target.name && op.version === target.version && op.stage === target.stage,
  );
}

export function isLive(op: StageOpSummary): boolean {
  return op.phase === 'Pending' || op.phase === 'Running';
}
