/**
 * Merging the interrupts of the packages due on a node together, as upstream does, so the node is
 * interrupted once: the strongest type wins (reboot, then restartAllServices, then service, then
 * noop), the first package by name holding it owns the merged interrupt, and service restarts are
 * unioned. The other packages record `{interrupt, skipped}` and complete with the owner's interrupt.
 */
import type { Interrupt, InterruptType, Package } from '../../../api/skyhook.js';
import { globMatches } from '../../../api/spec-checks.js';

const TYPE_RANK: Readonly<Record<InterruptType, number>> = { reboot: 0, restartAllServices: 1, service: 2, noop: 3 };

/**
 * Every interrupt the package asks for now: on a config cycle each configInterrupt whose key or
 * glob matches a changed key (in key order, duplicates dropped), else the package's own interrupt.
 */
export function packageInterrupts(pkg: Package, changedKeys: readonly string[] | undefined): Interrupt[] {
  if (changedKeys === undefined || changedKeys.length === 0) return pkg.interrupt ? [pkg.interrupt] : [];
  const found: Interrupt[] = [];
  for (const glob of Object.keys(pkg.configInterrupts ?? {}).sort()) {
    const interrupt = pkg.configInterrupts![glob]!;
    if (!changedKeys.some((key) => globMatches(glob, key))) continue;
    if (!found.some((seen) => sameInterrupt(seen, interrupt))) found.push(interrupt);
  }
  return found;
}

export interface MergedInterrupt {
  /** The package whose interrupt stage performs the merged interrupt. */
  owner: string;
  interrupt: Interrupt;
}

/** Merges the interrupts of several packages (any order; they are taken by package name). */
export function mergeInterrupts(
  candidates: readonly { package: string; interrupts: readonly Interrupt[] }[],
): MergedInterrupt | undefined {
  let merged: MergedInterrupt | undefined;
  for (const candidate of [...candidates].sort((a, b) =>
    a.package < b.package ? -1 : a.package > b.package ? 1 : 0,
  )) {
    for (const interrupt of candidate.interrupts) {
      if (merged === undefined || TYPE_RANK[interrupt.type] < TYPE_RANK[merged.interrupt.type]) {
        merged = { owner: candidate.package, interrupt: normalized(interrupt) };
      } else if (interrupt.type === 'service' && merged.interrupt.type === 'service') {
        merged = {
          owner: merged.owner,
          interrupt: { type: 'service', services: union(merged.interrupt.services, interrupt.services) },
        };
      }
      // A reboot restarts everything: nothing can outrank it, so the first one found stands.
      if (merged.interrupt.type === 'reboot') return merged;
    }
  }
  return merged;
}

function normalized(interrupt: Interrupt): Interrupt {
  return interrupt.type === 'service' ? { type: 'service', services: union(interrupt.services, []) } : { ...interrupt };
}

function union(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] {
  return [...new Set([...(a ?? []), ...(b ?? [])])].sort();
}

function sameInterrupt(a: Interrupt, b: Interrupt): boolean {
  return a.type === b.type && union(a.services, []).join('\n') === union(b.services, []).join('\n');
}
