/**
 * Upstream's per-package rules, independent of any node: which stage follows which, when a package
 * counts as complete, whether it has an interrupt, and how versions order.
 */
import semver from 'semver';
import type { Package } from '../../../api/skyhook.js';
import { globMatches } from '../../../api/spec-checks.js';
import { packageKey, type NodeState, type PackageStage, type PackageStatus } from '../../../api/node-state.js';
import { compareText } from '../../../util/compare.js';

/** A spec package with its name (the map key). */
export type NamedPackage = Package & { name: string };

export function namedPackages(packages: Record<string, Package> | undefined): NamedPackage[] {
  return Object.entries(packages ?? {})
    .map(([name, pkg]) => ({ ...pkg, name }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Whether the package's cycle ends with interrupt + post-interrupt. During a config cycle (changed
 * keys recorded for it) only a configInterrupt matching a changed key counts, and the package-level
 * interrupt is ignored, so a change to a key without one re-runs `config` alone.
 */
export function hasInterrupt(pkg: Package, changedKeys: readonly string[] | undefined): boolean {
  return packageInterrupt(pkg, changedKeys) !== undefined;
}

/** The interrupt the package asks for now (the first matching configInterrupt in key order on a config cycle). */
export function packageInterrupt(pkg: Package, changedKeys: readonly string[] | undefined): Package['interrupt'] {
  if (changedKeys && changedKeys.length > 0) {
    const globs = Object.keys(pkg.configInterrupts ?? {}).sort();
    const match = globs.find((glob) => changedKeys.some((key) => globMatches(glob, key)));
    return match === undefined ? undefined : pkg.configInterrupts?.[match];
  }
  return pkg.interrupt;
}

export const finalStage = (withInterrupt: boolean): PackageStage => (withInterrupt ? 'post-interrupt' : 'config');

/** The stage after a completed one; `undefined` once the cycle is done. */
export function nextStage(completed: PackageStage, withInterrupt: boolean): PackageStage | undefined {
  switch (completed) {
    case 'uninstall':
      return 'apply';
    case 'apply':
    case 'upgrade':
      return 'config';
    case 'config':
      return withInterrupt ? 'interrupt' : undefined;
    case 'interrupt':
      return withInterrupt ? 'post-interrupt' : undefined;
    case 'post-interrupt':
    case 'uninstall-interrupt':
      return undefined;
  }
}

export function isPackageComplete(entry: PackageStatus | undefined, pkg: Package, withInterrupt: boolean): boolean {
  return (
    entry !== undefined &&
    entry.version === pkg.version &&
    entry.state === 'complete' &&
    entry.stage === finalStage(withInterrupt)
  );
}

/**
 * Upstream's node completeness for one SCR: every spec package (`named`, from namedPackages) complete
 * at its spec version, and no entry still uninstalling.
 */
export function isNodeComplete(
  state: NodeState,
  named: readonly NamedPackage[],
  configUpdates: Record<string, string[]>,
): boolean {
  const specComplete = named.every((pkg) =>
    isPackageComplete(state[packageKey(pkg.name, pkg.version)], pkg, hasInterrupt(pkg, configUpdates[pkg.name])),
  );
  if (!specComplete) return false;
  for (const key in state) {
    const stage = state[key]!.stage;
    if (stage === 'uninstall' || stage === 'uninstall-interrupt') return false;
  }
  return true;
}

/**
 * Orders versions as Go's x/mod/semver does after adding a missing `v`: `1` and `1.2` are short for
 * `1.0.0` and `1.2.0`, prereleases sort before their release, build metadata is ignored.
 */
export function compareVersions(a: string, b: string): number {
  const left = semver.parse(fullVersion(a));
  const right = semver.parse(fullVersion(b));
  if (!left || !right) return compareText(a, b);
  return semver.compare(left, right);
}

function fullVersion(version: string): string {
  const bare = version.startsWith('v') ? version.slice(1) : version;
  if (/^\d+$/.test(bare)) return `${bare}.0.0`;
  if (/^\d+\.\d+$/.test(bare)) return `${bare}.0`;
  return bare;
}

/** Delay before a failed stage runs again: doubles per restart, like kubelet's crash-loop backoff. */
export function retryDelayMs(restarts: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, restarts - 1));
}
