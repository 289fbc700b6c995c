/**
 * Changes to one node's state for one SCR that follow from facts rather than from a choice: a spec
 * version change (upgrade, downgrade, removal), a stage op's outcome, a config cycle. Each returns a
 * new state and leaves its input alone.
 */
import type { Package } from '../../../api/skyhook.js';
import { packageKey, type NodeState, type PackageStatus } from '../../../api/node-state.js';
import { compareVersions } from './package-rules.js';
import type { StageOpSummary } from './planner-types.js';

export interface VersionChangeResult {
  state: NodeState;
  /** Packages whose version changed on this node (their config cycle is over: upstream clears configUpdates). */
  changedPackages: string[];
  /**
   * The change was written into the state now (a new upgrade, uninstall or downgrade entry), not
   * already there from an earlier pass: the moment upstream resets the batch state.
   */
  applied: boolean;
}

/**
 * Upstream's HandleVersionChange: a package gone from the spec is uninstalled; a higher version gets
 * an `upgrade` entry (the old entry goes when the upgrade completes); a lower one uninstalls the old
 * version first while the new entry waits as `{uninstall, skipped}`.
 */
export function applyVersionChanges(
  state: NodeState,
  packages: Record<string, Package> | undefined,
): VersionChangeResult {
  const next: NodeState = { ...state };
  const changed = new Set<string>();
  let applied = false;
  const set = (key: string, entry: PackageStatus): void => {
    next[key] = entry;
    applied = true;
  };
  for (const [key, entry] of Object.entries(state)) {
    const pkg = packages?.[entry.name];
    if (pkg === undefined) {
      if (entry.stage !== 'uninstall' && entry.stage !== 'uninstall-interrupt') set(key, open(entry, 'uninstall'));
      continue;
    }
    if (entry.version === pkg.version) continue;
    const newKey = packageKey(entry.name, pkg.version);
    if (compareVersions(pkg.version, entry.version) >= 0) {
      if (next[newKey] === undefined)
        set(newKey, { ...entryIdentity(entry.name, pkg), stage: 'upgrade', state: 'in_progress' });
    } else if (entry.stage !== 'uninstall') {
      set(key, open(entry, 'uninstall'));
      if (next[newKey] === undefined)
        set(newKey, { ...entryIdentity(entry.name, pkg), stage: 'uninstall', state: 'skipped' });
    }
    changed.add(entry.name);
  }
  return { state: next, changedPackages: [...changed].sort(), applied };
}

/**
 * A config cycle: the package's entry at its spec version re-runs `config`. An entry whose apply or
 * upgrade has not completed runs that stage again instead (at once, restarts reset, with the new
 * files; its config follows it anyway): moving it to `config` would skip a stage that never ran.
 */
export function startConfigCycle(state: NodeState, name: string, pkg: Package): NodeState {
  const key = packageKey(name, pkg.version);
  const entry = state[key];
  if (entry === undefined) return state;
  const unfinishedInstall =
    (entry.stage === 'apply' || entry.stage === 'upgrade') &&
    (entry.state === 'in_progress' || entry.state === 'erroring');
  return { ...state, [key]: open(entry, unfinishedInstall ? entry.stage : 'config') };
}

/**
 * Writes a stage op's outcome, only while the entry is still open at that stage (or absent: the
 * annotation was reset under a running op), so an old op can never move a package backwards.
 * Success: uninstall removes the entry and releases a waiting downgrade; upgrade drops the other
 * versions; interrupt completes the entries that skipped theirs for it. Failure: erroring with the
 * attempts added to the restart count. A running op with failed attempts marks the entry erroring.
 */
export function recordOpOutcome(state: NodeState, op: StageOpSummary): NodeState {
  const key = packageKey(op.package, op.version);
  const entry = state[key];
  const isOpen = entry === undefined || (entry.stage === op.stage && entry.state !== 'complete');
  if (!isOpen) return state;
  const base: PackageStatus = entry ?? { ...entryIdentity(op.package, op), stage: op.stage, state: 'in_progress' };
  const restarts = op.previousRestarts + op.restarts;
  if (op.phase === 'Failed')
    return { ...state, [key]: withRestarts({ ...base, stage: op.stage, state: 'erroring' }, Math.max(1, restarts)) };
  if (op.phase !== 'Completed') {
    return op.restarts > 0
      ? { ...state, [key]: withRestarts({ ...base, stage: op.stage, state: 'erroring' }, restarts) }
      : state;
  }
  const next: NodeState = { ...state };
  switch (op.stage) {
    case 'uninstall':
    case 'uninstall-interrupt':
      delete next[key];
      for (const [otherKey, other] of Object.entries(next)) {
        if (other.name === op.package && other.stage === 'uninstall' && other.state === 'skipped')
          next[otherKey] = { ...other, state: 'complete' };
      }
      return next;
    case 'upgrade':
      for (const [otherKey, other] of Object.entries(next))
        if (other.name === op.package && otherKey !== key) delete next[otherKey];
      break;
    case 'interrupt':
      for (const [otherKey, other] of Object.entries(next)) {
        if (other.stage === 'interrupt' && other.state === 'skipped') next[otherKey] = { ...other, state: 'complete' };
      }
      break;
    default:
      break;
  }
  next[key] = withRestarts({ ...base, stage: op.stage, state: 'complete' }, restarts);
  return next;
}

/** The entry moved to `stage`, in progress, with its restart count cleared. */
export function open(entry: PackageStatus, stage: PackageStatus['stage']): PackageStatus {
  return withRestarts({ ...entry, stage, state: 'in_progress' }, 0);
}

/** What identifies an entry (name, version, image, containerSHA), before any stage is set. */
export function entryIdentity(
  name: string,
  source: { version: string; image: string; containerSHA?: string },
): Omit<PackageStatus, 'stage' | 'state'> {
  const identity = { name, version: source.version, image: source.image };
  return source.containerSHA ? { ...identity, containerSHA: source.containerSHA } : identity;
}

export function withRestarts(entry: PackageStatus, restarts: number): PackageStatus {
  const { restarts: _dropped, ...rest } = entry;
  return restarts > 0 ? { ...rest, restarts } : rest;
}
