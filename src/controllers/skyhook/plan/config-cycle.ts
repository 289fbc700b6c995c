/**
 * Config changes as upstream handles them. A package's ConfigMap holds what its last config cycle
 * delivered; when the spec's configMap adds or changes keys, every node that has the package re-runs
 * `config`. The cycle is deferred while the package is still rolling out (upstream acts only when
 * the rollout has settled: complete on every node, or erroring on some node, which the new config
 * may fix). Unlike upstream, erroring in any stage counts, apply and upgrade included: upstream
 * waits only for config-side stages, so a package failing in apply (its script comes from the
 * configMap) could never be fixed by editing the configMap. Removed keys only update the ConfigMap.
 */
import type { Package } from '../../../api/skyhook.js';
import { packageKey, type NodeState } from '../../../api/node-state.js';
import { hasInterrupt, isPackageComplete, namedPackages } from './package-rules.js';
import type { StageOpSummary } from './planner-types.js';
import { isLive } from './stage-machine.js';

/** `<skyhook>-<pkg>-<version>` lower-cased, dots kept (upstream's package ConfigMap name). */
export const packageConfigMapName = (skyhook: string, pkg: string, version: string): string =>
  `${skyhook}-${pkg}-${version}`.toLowerCase();

export interface ConfigCycleInput {
  packages: Record<string, Package> | undefined;
  /** Data of existing package ConfigMaps by `"<pkg>|<version>"`. */
  configMaps: Record<string, Record<string, string>>;
  configUpdates: Record<string, string[]>;
  /** The nodes whose state counts for "settled" (targeted, not blocked), with this SCR's ops there. */
  nodes: { state: NodeState; ops: StageOpSummary[] }[];
}

export interface ConfigCyclePlan {
  /** ConfigMaps to create or update, with the data they should hold. */
  upserts: { package: string; version: string; data: Record<string, string> }[];
  /** Packages whose config cycle starts now: their entries go to `{config, in_progress}` on every node. */
  cycles: string[];
  configUpdates: Record<string, string[]>;
}

export function planConfigCycles(input: ConfigCycleInput): ConfigCyclePlan {
  const plan: ConfigCyclePlan = { upserts: [], cycles: [], configUpdates: { ...input.configUpdates } };
  for (const pkg of namedPackages(input.packages)) {
    const desired = pkg.configMap ?? {};
    const current = input.configMaps[packageKey(pkg.name, pkg.version)];
    if (current === undefined) {
      if (Object.keys(desired).length > 0)
        plan.upserts.push({ package: pkg.name, version: pkg.version, data: desired });
      continue;
    }
    const changedKeys = Object.keys(desired)
      .filter((key) => current[key] !== desired[key])
      .sort();
    const removedKeys = Object.keys(current).filter((key) => !(key in desired));
    if (changedKeys.length === 0) {
      if (removedKeys.length > 0) plan.upserts.push({ package: pkg.name, version: pkg.version, data: desired });
      continue;
    }
    const key = packageKey(pkg.name, pkg.version);
    const withInterrupt = hasInterrupt(pkg, input.configUpdates[pkg.name]);
    const allComplete = input.nodes.every(
      (node) =>
        isPackageComplete(node.state[key], pkg, withInterrupt) &&
        !node.ops.some((op) => isLive(op) && op.package === pkg.name),
    );
    const erroring = input.nodes.some((node) => node.state[key]?.state === 'erroring');
    if (!allComplete && !erroring) continue;
    const previous = allComplete ? [] : (input.configUpdates[pkg.name] ?? []);
    plan.configUpdates[pkg.name] = [...new Set([...previous, ...changedKeys])];
    plan.cycles.push(pkg.name);
    plan.upserts.push({ package: pkg.name, version: pkg.version, data: desired });
  }
  return plan;
}
