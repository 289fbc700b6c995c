/**
 * Evaluates the DeploymentPolicies' health gates for the planner (which decides with the results,
 * plan/health-gate-plan.ts): for each policy an SCR uses, on the nodes where one of its SCRs may be
 * waiting on a gate (in progress or erroring for it, holding its cordon, or with a gate wait under
 * way; `skyhook plan` asks for every targeted node), each gate's check from the node and pod caches
 * or Prometheus. Also the policies' gate problems the API server cannot see (a CEL expression that
 * does not compile, a bad alertname regexp), each naming its field, for InvalidSpec.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { DeploymentPolicy } from '../../../../api/deployment-policy.js';
import {
  GATE_POINTS,
  gateField,
  gateKey,
  type GateCheckResult,
  type HealthGate,
  type HealthGateResults,
} from '../../../../api/health-gates.js';
import { selectorMatches } from '../../../../api/label-selector.js';
import { nodeAnnotations } from '../../../../api/names.js';
import { nameOf } from '../../../../api/object-meta.js';
import type { Skyhook } from '../../../../api/skyhook.js';
import { cordonClaim } from '../../../../jobs/cordon/claims.js';
import { compileCel } from './cel-gate.js';
import { checkCel, checkNodeConditions, checkPods } from './gate-checks.js';
import type { PrometheusGate } from './prometheus-gate.js';

export interface GateEvaluationInput {
  skyhooks: Skyhook[];
  policies: DeploymentPolicy[];
  nodes: V1Node[];
  /** The pods bound to a node (asked only for nodes a pods gate checks: an index, not a scan). */
  podsOn: (node: string) => V1Pod[];
  prometheus: PrometheusGate;
  /** `active`: only nodes that may be waiting on a gate (each reconcile); `all`: every targeted node. */
  scope: 'active' | 'all';
}

/** How often the gates of a node waiting on them are checked again (their results change outside any event). */
export const GATE_RECHECK_MS = 5_000;

/** A recheck delay while some node waits on the SCR's gates (its `healthGate_<scr>` annotation is set). */
export function gateRecheckMs(nodes: V1Node[], skyhook: string): number | undefined {
  const key = nodeAnnotations.healthGate(skyhook);
  return nodes.some((node) => Object.hasOwn(node.metadata?.annotations ?? {}, key)) ? GATE_RECHECK_MS : undefined;
}

const hasGates = (policy: DeploymentPolicy): boolean =>
  GATE_POINTS.some((point) => (policy.spec.healthGates?.[point]?.length ?? 0) > 0);

/** Undefined when no SCR uses a policy with gates (the planner then needs nothing). */
export async function evaluateHealthGates(input: GateEvaluationInput): Promise<HealthGateResults | undefined> {
  const gated = new Map(input.policies.filter(hasGates).map((policy) => [nameOf(policy), policy]));
  const users = input.skyhooks.filter((scr) => scr.spec.deploymentPolicy && gated.has(scr.spec.deploymentPolicy));
  if (users.length === 0) return undefined;
  const out: HealthGateResults = { problems: {}, results: {} };
  const pending: Promise<void>[] = [];
  for (const scr of users) {
    const policy = gated.get(scr.spec.deploymentPolicy!)!;
    const policyName = nameOf(policy);
    out.problems[policyName] ??= gateProblems(policy);
    out.results[policyName] ??= {};
    const byNode = out.results[policyName];
    for (const node of input.nodes) {
      const name = nameOf(node);
      if (byNode[name] !== undefined || !selectorMatches(scr.spec.nodeSelectors, node.metadata?.labels ?? {})) continue;
      if (input.scope === 'active' && !mayBeGating(node, nameOf(scr))) continue;
      const results: Record<string, GateCheckResult> = {};
      byNode[name] = results;
      for (const point of GATE_POINTS)
        for (const gate of policy.spec.healthGates?.[point] ?? [])
          pending.push(
            checkGate(gate, node, input.podsOn, input.prometheus).then((result) => {
              results[gateKey(point, gate.name)] = result;
            }),
          );
    }
  }
  await Promise.all(pending);
  return out;
}

/** In progress or erroring for the SCR, holding its cordon, or with a gate wait under way. */
function mayBeGating(node: V1Node, skyhook: string): boolean {
  const annotations = node.metadata?.annotations ?? {};
  const status = annotations[nodeAnnotations.status(skyhook)];
  return (
    status === 'in_progress' ||
    status === 'erroring' ||
    Object.hasOwn(annotations, cordonClaim(skyhook)) ||
    Object.hasOwn(annotations, nodeAnnotations.healthGate(skyhook))
  );
}

async function checkGate(
  gate: HealthGate,
  node: V1Node,
  podsOn: (node: string) => V1Pod[],
  prometheus: PrometheusGate,
): Promise<GateCheckResult> {
  if (gate.nodeConditions) return checkNodeConditions(gate.nodeConditions, node);
  if (gate.cel !== undefined) {
    const compiled = compileCel(gate.cel);
    return 'error' in compiled
      ? { passed: false, detail: `CEL expression invalid: ${compiled.error}` }
      : checkCel(compiled, node);
  }
  if (gate.pods) return checkPods(gate.pods, nameOf(node), podsOn(nameOf(node)));
  if (gate.prometheus) return prometheus.check(gate.prometheus, nameOf(node));
  return { passed: false, detail: 'the gate sets no check' };
}

/** What the API server cannot check of the policy's gates, each naming its field. */
export function gateProblems(policy: DeploymentPolicy): string[] {
  const problems: string[] = [];
  const prefix = `DeploymentPolicy ${nameOf(policy)}`;
  for (const point of GATE_POINTS)
    (policy.spec.healthGates?.[point] ?? []).forEach((gate, index) => {
      const field = gateField(point, index);
      if (gate.cel !== undefined) {
        const compiled = compileCel(gate.cel);
        if ('error' in compiled) problems.push(`${prefix} ${field}.cel: ${compiled.error}`);
      }
      for (const which of ['match', 'ignore'] as const) {
        const pattern = gate.prometheus?.alerts?.[which];
        if (pattern === undefined) continue;
        try {
          new RegExp(pattern);
        } catch (error) {
          problems.push(
            `${prefix} ${field}.prometheus.alerts.${which}: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
    });
  return problems;
}
