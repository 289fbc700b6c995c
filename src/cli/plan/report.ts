/**
 * What `skyhook plan` tells: from the simulation (simulation.ts) and the cluster as it is, which
 * nodes the SCR selects, the batch each starts in, the stages each runs, which are cordoned, drained
 * and interrupted (upstream cordons and drains a node before the packages of an interrupt run), and
 * what holds each node back: the ignore label, untolerated taints, an earlier SCR still at work on it,
 * pods matching podNonInterruptLabels (which would hold its interrupt), an unreadable nodeState.
 * The eligibility rules are the planner's own (node-eligibility.ts); nothing here re-decides them.
 */
import { IGNORE_NODE_LABEL, SKYHOOK_ANNOTATIONS } from '../../api/names.js';
import type { Interrupt, Skyhook } from '../../api/skyhook.js';
import { skyhookSpecProblems } from '../../api/spec-checks.js';
import { isIgnored, selectorMatches, untoleratedTaints } from '../../controllers/skyhook/node-eligibility.js';
import { readNodeSkyhookRecord } from '../../controllers/skyhook/node-state.js';
import { comparePriority, type NodeView } from '../../controllers/skyhook/planner.js';
import { rolloutBudgets } from '../../controllers/skyhook/rollout.js';
import type { SimulatedStage, Simulation } from './simulation.js';

export interface PodView {
  namespace: string;
  name: string;
  node: string;
  phase: string;
  labels: Record<string, string>;
}

export interface PlanInput {
  skyhook: Skyhook;
  /** Every SCR the simulation planned (the planned one included). */
  skyhooks: Skyhook[];
  nodes: NodeView[];
  pods: PodView[];
  simulation: Simulation;
}

export interface PlannedNode {
  node: string;
  /** Absent when the node would not start (blocked, waiting, or complete already). */
  batch?: number;
  /** `pkg:version stage, stage; pkg2:version …` in the order they would run. */
  stages: string;
  cordonAndDrain: boolean;
  /** The interrupt(s) performed, e.g. `reboot` or `service(containerd, cron)`. */
  interrupt?: string;
  statusNow: string;
  statusAtEnd: string;
  blockers: string[];
}

export interface PlanReport {
  skyhook: string;
  priority: number;
  paused: boolean;
  disabled: boolean;
  problems: string[];
  budget: { ceiling: number; source: string };
  selected: number;
  total: number;
  nodes: PlannedNode[];
  notSelected: string[];
  /** Every selected node would end complete. */
  completes: boolean;
  /** The simulation stopped at its pass limit. */
  truncated: boolean;
}

export function buildPlanReport({ skyhook, skyhooks, nodes, pods, simulation }: PlanInput): PlanReport {
  const name = skyhook.metadata.name ?? '';
  const spec = skyhook.spec;
  const selected = nodes.filter((node) => selectorMatches(spec.nodeSelectors, node.labels));
  const earlier = skyhooks.filter((other) => other.metadata.name !== name && comparePriority(other, skyhook) < 0 && other.metadata.annotations?.[SKYHOOK_ANNOTATIONS.disable] !== 'true');
  const firstPass = new Map(simulation.firstPass.map((node) => [node.name, node]));
  const planned = selected.map((node): PlannedNode => {
    const simulated = simulation.nodes[node.name];
    const stages = simulated?.stages ?? [];
    const interrupts = stages.flatMap((stage) => (stage.interrupt ? [describeInterrupt(stage.interrupt)] : []));
    const cordonAndDrain = interrupts.length > 0;
    const row: PlannedNode = {
      node: node.name,
      stages: formatStages(stages),
      cordonAndDrain,
      statusNow: simulation.statusNow[node.name] ?? 'unknown',
      statusAtEnd: simulation.statusAtEnd[node.name] ?? 'unknown',
      blockers: [],
    };
    if (simulated?.batch !== undefined) row.batch = simulated.batch;
    if (cordonAndDrain) row.interrupt = [...new Set(interrupts)].join(', ');
    row.blockers = blockersOf(node, firstPass.get(node.name) ?? node, { skyhook, earlier, pods, cordonAndDrain });
    if (row.blockers.length === 0 && row.batch === undefined && row.statusAtEnd !== 'complete') row.blockers.push(`stays ${row.statusAtEnd}`);
    return row;
  });
  planned.sort((a, b) => (a.batch ?? Infinity) - (b.batch ?? Infinity) || a.node.localeCompare(b.node));
  const selectedNames = new Set(selected.map((node) => node.name));
  return {
    skyhook: name,
    priority: spec.priority ?? 200,
    paused: skyhook.metadata.annotations?.[SKYHOOK_ANNOTATIONS.pause] === 'true',
    disabled: skyhook.metadata.annotations?.[SKYHOOK_ANNOTATIONS.disable] === 'true',
    problems: skyhookSpecProblems(spec),
    budget: { ceiling: rolloutBudgets(spec, selected.map((node) => node.name))[0]?.ceiling ?? 1, source: budgetSource(skyhook) },
    selected: selected.length,
    total: nodes.length,
    nodes: planned,
    notSelected: nodes.filter((node) => !selectedNames.has(node.name)).map((node) => node.name).sort(),
    completes: planned.every((node) => node.statusAtEnd === 'complete'),
    truncated: simulation.truncated,
  };
}

interface BlockerContext {
  skyhook: Skyhook;
  earlier: Skyhook[];
  pods: PodView[];
  cordonAndDrain: boolean;
}

/** `node` as the cluster has it; `afterFirstPass` with the statuses every SCR has on it now. */
function blockersOf(node: NodeView, afterFirstPass: NodeView, { skyhook, earlier, pods, cordonAndDrain }: BlockerContext): string[] {
  const blockers: string[] = [];
  const spec = skyhook.spec;
  if (isIgnored(node)) blockers.push(`ignore label ${IGNORE_NODE_LABEL}=true`);
  for (const taint of untoleratedTaints(node, spec)) blockers.push(`untolerated taint ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`);
  const malformed = readNodeSkyhookRecord(node, skyhook.metadata.name ?? '').malformed;
  if (malformed) blockers.push(malformed.message);
  for (const other of earlier) {
    const status = readNodeSkyhookRecord(afterFirstPass, other.metadata.name ?? '').status;
    if (status !== undefined && status !== 'complete') {
      blockers.push(`waits for Skyhook ${other.metadata.name ?? ''} (priority ${other.spec.priority ?? 200}, ${status} here) to complete on this node first`);
    }
  }
  const selector = spec.podNonInterruptLabels;
  const guarded = Object.keys(selector?.matchLabels ?? {}).length > 0 || (selector?.matchExpressions ?? []).length > 0;
  if (cordonAndDrain && guarded) {
    for (const pod of pods) {
      if (pod.node !== node.name || (pod.phase !== 'Running' && pod.phase !== 'Pending') || !selectorMatches(selector, pod.labels)) continue;
      blockers.push(`interrupt waits for pod ${pod.namespace}/${pod.name} (matches podNonInterruptLabels)`);
    }
  }
  return blockers;
}

function budgetSource(skyhook: Skyhook): string {
  const { interruptionBudget: budget, deploymentPolicy } = skyhook.spec;
  if (deploymentPolicy) return `deploymentPolicy ${deploymentPolicy} (its compartments are not planned yet: one budget of 100%)`;
  if (budget?.percent !== undefined && budget.percent !== null) return `interruptionBudget percent ${budget.percent}`;
  if (budget?.count !== undefined && budget.count !== null) return `interruptionBudget count ${budget.count}`;
  return 'no interruptionBudget: all nodes';
}

export function describeInterrupt(interrupt: Interrupt): string {
  return interrupt.services && interrupt.services.length > 0 ? `${interrupt.type}(${interrupt.services.join(', ')})` : interrupt.type;
}

/** Stages grouped by package, packages in the order they start: `a:1 apply, config; b:2 apply, config`. */
export function formatStages(stages: SimulatedStage[]): string {
  const groups = new Map<string, string[]>();
  for (const stage of stages) {
    const id = `${stage.package}:${stage.version}`;
    groups.set(id, [...(groups.get(id) ?? []), stage.stage]);
  }
  return [...groups].map(([id, names]) => `${id} ${names.join(', ')}`).join('; ');
}
