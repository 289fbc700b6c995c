/**
 * The rules of a Skyhook spec that the API server cannot check with CEL: a dependency cycle, a
 * configInterrupts glob that matches no configMap key, and the rules of the objects derived from
 * the spec (spec-checks-kube.ts). A resource limit below its request is refused by the CRD's CEL
 * rules now (PackageResources); it is still checked here for SCRs stored before those rules. The
 * controller reports these as an InvalidSpec condition instead of acting on the SCR.
 */
import type { Package, SkyhookSpec } from './skyhook.js';
import { kubeObjectProblems } from './spec-checks-kube.js';

export function skyhookSpecProblems(spec: SkyhookSpec): string[] {
  const packages = spec.packages ?? {};
  const problems = dependencyCycles(packages).map(
    (cycle) => `packages: dependsOn forms a cycle: ${cycle.join(' -> ')}`,
  );
  for (const [name, pkg] of Object.entries(packages)) {
    problems.push(...unmatchedGlobs(name, pkg), ...resourceProblems(name, pkg));
  }
  return [...problems, ...kubeObjectProblems(spec)];
}

/**
 * Cycles of dependsOn, each once and starting from its smallest name, e.g. `[a, b, a]`. A package
 * is explored once (depth first), so every cycle is reported at least through one of its edges.
 */
export function dependencyCycles(packages: Record<string, Package>): string[][] {
  const cycles = new Map<string, string[]>();
  const explored = new Set<string>();
  const visit = (name: string, path: string[]): void => {
    if (explored.has(name)) return;
    const start = path.indexOf(name);
    if (start >= 0) {
      const loop = path.slice(start);
      const first = loop.indexOf([...loop].sort()[0]!);
      const rotated = [...loop.slice(first), ...loop.slice(0, first)];
      cycles.set(rotated.join('|'), [...rotated, rotated[0]!]);
      return;
    }
    for (const dependency of Object.keys(packages[name]?.dependsOn ?? {})) {
      if (dependency in packages) visit(dependency, [...path, name]);
    }
    explored.add(name);
  };
  for (const name of Object.keys(packages).sort()) visit(name, []);
  return [...cycles.values()];
}

/** Upstream's globs: `*` is the only wildcard and matches any run of characters. */
export function globMatches(glob: string, key: string): boolean {
  const pattern = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`).test(key);
}

function unmatchedGlobs(name: string, pkg: Package): string[] {
  const keys = Object.keys(pkg.configMap ?? {});
  return Object.keys(pkg.configInterrupts ?? {})
    .filter((glob) => glob.includes('*') && !keys.some((key) => globMatches(glob, key)))
    .map((glob) => `packages[${name}].configInterrupts: glob ${JSON.stringify(glob)} matches no configMap key`);
}

function resourceProblems(name: string, pkg: Package): string[] {
  const r = pkg.resources;
  if (
    r?.cpuRequest === undefined ||
    r.cpuLimit === undefined ||
    r.memoryRequest === undefined ||
    r.memoryLimit === undefined
  )
    return [];
  const problems: string[] = [];
  if (quantityValue(r.cpuLimit) < quantityValue(r.cpuRequest))
    problems.push(`packages[${name}].resources: cpuLimit is below cpuRequest`);
  if (quantityValue(r.memoryLimit) < quantityValue(r.memoryRequest))
    problems.push(`packages[${name}].resources: memoryLimit is below memoryRequest`);
  return problems;
}

const QUANTITY_SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A quantity's value as a number: precise enough to compare a limit with a request. */
export function quantityValue(quantity: number | string): number {
  if (typeof quantity === 'number') return quantity;
  const match = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([eE][+-]?[0-9]+)|([KMGTPE]i|[numkMGTPE])?)$/.exec(
    quantity,
  );
  if (!match) return Number.NaN;
  const [, mantissa, exponent, suffix] = match;
  return Number(mantissa! + (exponent ?? '')) * QUANTITY_SUFFIXES[suffix ?? '']!;
}
