/**
 * What one planning pass of one SCR knows before it decides anything: the SCR, its flags, the
 * nodes it targets and its ops. Every phase of `planSkyhook` reads it; none changes it.
 */
import type { DeploymentPolicy } from '../../../api/deployment-policy.js';
import type { HealthGateResults } from '../../../api/health-gates.js';
import type { DisruptionBudget } from '../../../api/disruption-budget.js';
import type { DisruptionLedger } from '../../disruption/budget-rules.js';
import type { Skyhook, SkyhookSpec } from '../../../api/skyhook.js';
import { SKYHOOK_ANNOTATIONS } from '../../../api/names.js';
import { skyhookSpecProblems } from '../../../api/spec-checks.js';
import { selectorMatches } from '../../../api/label-selector.js';
import { cordonClaim } from '../../../jobs/cordon/claims.js';
import { isIgnored, untoleratedTaints } from './node-eligibility.js';
import {
  budgetWindowSources,
  nodeWindowVerdicts,
  policyWindowSources,
  type WindowVerdict,
} from './maintenance-windows.js';
import type { NodeWork } from './node-work.js';
import type { PriorityGates } from './priority-gates.js';
import type { NodeView, PlannerSettings, SkyhookInput, StageOpSummary } from './planner-types.js';
import { nameOf } from '../../../api/object-meta.js';
import { OpIndex } from './op-index.js';
import { enforcedRefusals, type PackageTrustDecision } from './package-trust.js';
import type { PlanCacheRun, SkyhookCacheRun } from './plan-cache.js';

export interface SkyhookPlanInput {
  skyhook: SkyhookInput;
  nodes: NodeView[];
  stageOps: StageOpSummary[];
  now: number;
  settings: PlannerSettings;
  gates: PriorityGates;
  /** The cluster's DeploymentPolicies (an SCR naming one not here is blocked). */
  policies?: DeploymentPolicy[];
  /** Every SCR of the cluster, for the conflicts between them (input-warnings.ts). */
  skyhooks?: Skyhook[];
  /** The health gates' results and problems (health-gate-plan.ts); absent = none evaluated. */
  healthGates?: HealthGateResults;
  /** The cluster-wide DisruptionBudgets, shared by every SCR of the planning run (cluster-budget.ts). */
  ledger?: DisruptionLedger;
  /** The cluster-wide DisruptionBudgets, for the maintenance windows of those covering a node. */
  budgets?: readonly DisruptionBudget[];
  /** The PackageTrustPolicies' decisions on this SCR's package versions (package-trust.ts). */
  trust?: Readonly<Record<string, PackageTrustDecision>>;
  /** `stageOps` indexed once for the run (built here when absent). */
  opIndex?: OpIndex;
  /** The run's per-node caches (plan-cache.ts); absent = everything computed afresh. */
  caches?: PlanCacheRun;
}

export interface SkyhookPass extends SkyhookPlanInput {
  scr: Skyhook;
  name: string;
  spec: SkyhookSpec;
  paused: boolean;
  disabled: boolean;
  /** Spec problems CEL cannot catch: the SCR is blocked until they are fixed. */
  problems: string[];
  /** Packages whose image an Enforce PackageTrustPolicy refused: the SCR is blocked until fixed. */
  trustRefusals: string[];
  /** Paused, disabled, invalid or refused by a trust policy: nothing new starts and node state is not moved on. */
  frozen: boolean;
  /** This SCR's ops (on any node). */
  ops: StageOpSummary[];
  opIndex: OpIndex;
  /** This SCR's per-node cache for this run, if the caller keeps one. */
  cache?: SkyhookCacheRun;
  /** The nodes the SCR selects, oldest first (the order work starts in). */
  targeted: NodeView[];
  targetedNames: ReadonlySet<string>;
  policy?: DeploymentPolicy;
  /** The DeploymentPolicy the SCR names but the cluster lacks. */
  missingPolicy?: string;
  /** This SCR's cordon claim annotation. */
  claim: string;
  /** What the maintenance windows over a node (its SCR's policy's) say at `now`. */
  windowsOf: (node: NodeView) => WindowVerdict;
}

export function skyhookPass(input: SkyhookPlanInput): SkyhookPass {
  const scr = input.skyhook.skyhook;
  const name = nameOf(scr);
  const spec = scr.spec;
  const paused = scr.metadata.annotations?.[SKYHOOK_ANNOTATIONS.pause] === 'true';
  const disabled = scr.metadata.annotations?.[SKYHOOK_ANNOTATIONS.disable] === 'true';
  const problems = [
    ...skyhookSpecProblems(spec),
    ...(spec.deploymentPolicy ? (input.healthGates?.problems[spec.deploymentPolicy] ?? []) : []),
  ];
  const targeted = input.nodes
    .filter((node) => selectorMatches(spec.nodeSelectors, node.labels))
    .sort((a, b) => a.createdAt - b.createdAt || (a.name < b.name ? -1 : 1));
  const policy = spec.deploymentPolicy
    ? input.policies?.find((candidate) => candidate.metadata.name === spec.deploymentPolicy)
    : undefined;
  const opIndex = input.opIndex ?? new OpIndex(input.stageOps);
  const trustRefusals = enforcedRefusals(input.trust);
  const pass: SkyhookPass = {
    ...input,
    opIndex,
    scr,
    name,
    spec,
    paused,
    disabled,
    problems,
    trustRefusals,
    frozen: paused || disabled || problems.length > 0 || trustRefusals.length > 0,
    ops: opIndex.ofSkyhook(name),
    targeted,
    targetedNames: new Set(targeted.map((node) => node.name)),
    claim: cordonClaim(name),
    windowsOf: nodeWindowVerdicts(policyWindowSources(policy), budgetWindowSources(input.budgets), input.now),
  };
  if (policy) pass.policy = policy;
  if (spec.deploymentPolicy && policy === undefined) pass.missingPolicy = spec.deploymentPolicy;
  if (input.caches) pass.cache = input.caches.forSkyhook(name, cacheKey(pass));
  return pass;
}

/** Everything of the pass that the cached per-node phases read besides the node and its ops. */
function cacheKey(pass: SkyhookPass): string {
  const { name, spec, paused, disabled, problems, missingPolicy, settings, trust } = pass;
  return JSON.stringify([name, spec, paused, disabled, problems, missingPolicy ?? null, settings, trust ?? null]);
}

/** Why nothing may start on the node whatever the rollout says, if anything. */
export function blockedReason(pass: SkyhookPass, work: NodeWork): 'malformed' | 'ignored' | 'taint' | undefined {
  if (work.record.malformed) return 'malformed';
  if (isIgnored(work.node)) return 'ignored';
  return untoleratedTaints(work.node, pass.spec, pass.settings.runtimeRequiredTaint).length > 0 ? 'taint' : undefined;
}
