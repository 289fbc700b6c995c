/**
 * An SCR's nodes split into rollout compartments. Without a DeploymentPolicy there is one,
 * `__default__`, with the legacy interruptionBudget. With one, every policy compartment plus
 * `__default__` (the policy's default) for nodes matching none. A node matching several selectors
 * goes where upstream puts it: the safest strategy (fixed, linear, exponential, then none), then the
 * smaller ceiling (counted over this SCR's nodes matching the selector), then the name.
 */
import type { Budget, DeploymentPolicySpec, Strategy, StrategyKind } from '../../../api/deployment-policy.js';
import { DEFAULT_COMPARTMENT } from '../../../api/names.js';
import type { SkyhookSpec } from '../../../api/skyhook.js';
import { selectorMatches } from '../../../api/label-selector.js';
import type { NodeView } from './planner-types.js';
import { budgetCeiling } from './rollout.js';

/** A strategy with upstream's defaults filled in. */
export interface StrategyParams {
  kind: StrategyKind;
  initialBatch: number;
  /** Percent of a batch that must succeed. */
  batchThreshold: number;
  /** Consecutive failed batches that stop the rollout; undefined = never. */
  failureThreshold?: number;
  /** Progress percent below which failures shrink batches and can stop the rollout. */
  safetyLimit: number;
  delta: number;
  growthFactor: number;
}

export interface Compartment {
  name: string;
  /** Node names, oldest node first (the order work starts in). */
  nodes: string[];
  /** Nodes at work at once. */
  ceiling: number;
  /** Batches; without one the compartment is a sliding window of `ceiling` nodes. */
  strategy?: StrategyParams;
  /** The `__default__` compartment of an SCR without a policy. */
  legacy: boolean;
}

const STRATEGY_RANK: Readonly<Record<StrategyKind | 'none', number>> = { fixed: 0, linear: 1, exponential: 2, none: 3 };

export function strategyParams(strategy: Strategy | undefined): StrategyParams | undefined {
  const kind = strategy?.fixed
    ? 'fixed'
    : strategy?.linear
      ? 'linear'
      : strategy?.exponential
        ? 'exponential'
        : undefined;
  if (kind === undefined) return undefined;
  const raw: {
    initialBatch?: number;
    batchThreshold?: number;
    failureThreshold?: number | null;
    safetyLimit?: number;
    delta?: number;
    growthFactor?: number;
  } = strategy![kind]!;
  const params: StrategyParams = {
    kind,
    initialBatch: raw.initialBatch ?? 1,
    batchThreshold: raw.batchThreshold ?? 100,
    safetyLimit: raw.safetyLimit ?? 50,
    delta: raw.delta ?? 1,
    growthFactor: raw.growthFactor ?? 2,
  };
  if (raw.failureThreshold !== undefined && raw.failureThreshold !== null)
    params.failureThreshold = raw.failureThreshold;
  return params;
}

/** A policy budget's ceiling over `matched` nodes: the count, or a percent of them (at least 1 of any). */
export function policyCeiling(budget: Budget, matched: number): number {
  if (budget.count !== undefined) return budget.count;
  return matched === 0 ? 0 : Math.max(1, Math.floor((matched * (budget.percent ?? 100)) / 100));
}

/** `nodes` must be the SCR's targeted nodes in work order. */
export function buildCompartments(
  spec: SkyhookSpec,
  policy: DeploymentPolicySpec | undefined,
  nodes: NodeView[],
): Compartment[] {
  if (policy === undefined) {
    const names = nodes.map((node) => node.name);
    return [
      {
        name: DEFAULT_COMPARTMENT,
        nodes: names,
        ceiling: budgetCeiling(spec.interruptionBudget, names.length),
        legacy: true,
      },
    ];
  }
  const declared = (policy.compartments ?? []).map((compartment) => {
    const matching = nodes.filter((node) => selectorMatches(compartment.selector, node.labels));
    const strategy = strategyParams(compartment.strategy);
    return {
      compartment,
      matching: new Set(matching.map((node) => node.name)),
      rank: STRATEGY_RANK[strategy?.kind ?? 'none'],
      tieCeiling: policyCeiling(compartment.budget, matching.length),
      strategy,
    };
  });
  const members = new Map<string, string[]>([
    [DEFAULT_COMPARTMENT, []],
    ...declared.map((d): [string, string[]] => [d.compartment.name, []]),
  ]);
  for (const node of nodes) {
    const candidates = declared
      .filter((d) => d.matching.has(node.name))
      .sort(
        (a, b) => a.rank - b.rank || a.tieCeiling - b.tieCeiling || (a.compartment.name < b.compartment.name ? -1 : 1),
      );
    members.get(candidates[0]?.compartment.name ?? DEFAULT_COMPARTMENT)!.push(node.name);
  }
  const compartments: Compartment[] = declared.map((d) => {
    const names = members.get(d.compartment.name)!;
    const built: Compartment = {
      name: d.compartment.name,
      nodes: names,
      ceiling: policyCeiling(d.compartment.budget, names.length),
      legacy: false,
    };
    if (d.strategy) built.strategy = d.strategy;
    return built;
  });
  const defaults = members.get(DEFAULT_COMPARTMENT)!;
  const fallback: Compartment = {
    name: DEFAULT_COMPARTMENT,
    nodes: defaults,
    ceiling: policyCeiling(policy.default.budget, defaults.length),
    legacy: false,
  };
  const strategy = strategyParams(policy.default.strategy);
  if (strategy) fallback.strategy = strategy;
  return [...compartments, fallback];
}
