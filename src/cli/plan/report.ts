/**
 * What `skyhook plan` tells, read off the simulation (simulation.ts), which is the controller's
 * planner played forward: the nodes the SCR selects, the batch each starts in, the stages each
 * runs, which are cordoned, drained and interrupted, and what holds each node back, in the
 * planner's own words (the `waiting_<scr>` reasons it gives every held node: TaintNotTolerable,
 * NodeIgnored, HigherPrioritySkyhook, NonInterruptPodsRunning, …). Nothing here re-decides them.
 */
import { SKYHOOK_ANNOTATIONS } from '../../api/names.js';
import type { Interrupt, Skyhook } from '../../api/skyhook.js';
import { skyhookSpecProblems } from '../../api/spec-checks.js';
import type { PlannedMaintenance } from './maintenance.js';
import type { SimulatedStage, Simulation } from './simulation.js';
import { nameOf } from '../../api/object-meta.js';
import { compareText } from '../../util/compare.js';

/** Waits that are the rollout working as intended (the batch column shows them), not blockers. */
const ROUTINE_HOLDS = ['RolloutBudget', 'Cordoning', 'StagesRunning', 'InterruptMerge'];

export interface PlannedNode {
  node: string;
  /** Absent when the node would not start (blocked, waiting, or complete already). */
  batch?: number;
  /** `pkg:version stage, stage; pkg2:version …` in the order they would run. */
  stages: string;
  cordon: boolean;
  drain: boolean;
  /** The interrupt(s) performed, e.g. `reboot` or `service(containerd, cron)`. */
  interrupt?: string;
  /** The node's status for the SCR right after it is applied (the operator's first pass). */
  statusOnApply: string;
  statusAtEnd: string;
  /** `<Reason>: <detail>` of what holds the node, as the planner reports it. */
  blockers: string[];
}

export interface PlanReport {
  skyhook: string;
  priority: number;
  paused: boolean;
  disabled: boolean;
  problems: string[];
  /** Budget per compartment, as the planner computed it on the first pass. */
  compartments: { name: string; matched: number; ceiling: number }[];
  selected: number;
  total: number;
  nodes: PlannedNode[];
  notSelected: string[];
  /** Every selected node would end complete. */
  completes: boolean;
  /** The simulation stopped at its pass limit. */
  truncated: boolean;
  /**
   * The maintenance windows over the selected nodes (the DeploymentPolicy's and the covering
   * DisruptionBudgets'), when there are any: open now for every node, or the earliest opening.
   */
  maintenanceWindows?: { sources: string[]; open: boolean; closedNodes: number; nextOpen?: string };
  /** Selected nodes holding or waiting for a maintenance slot (maintenance.ts). */
  maintenance?: PlannedMaintenance[];
}

export function buildPlanReport(skyhook: Skyhook, nodeNames: string[], simulation: Simulation): PlanReport {
  const planned = Object.entries(simulation.nodes).map(([node, simulated]): PlannedNode => {
    const interrupts = simulated.stages.flatMap((stage) =>
      stage.interrupt ? [describeInterrupt(stage.interrupt)] : [],
    );
    const statusAtEnd = simulation.statusAtEnd[node] ?? 'unknown';
    const holdAtEnd = simulation.holdAtEnd[node];
    const blockers = simulated.holds.filter((hold) => !ROUTINE_HOLDS.includes(hold.slice(0, hold.indexOf(':'))));
    if (statusAtEnd !== 'complete' && holdAtEnd !== undefined && !blockers.includes(holdAtEnd))
      blockers.push(holdAtEnd);
    const row: PlannedNode = {
      node,
      stages: formatStages(simulated.stages),
      cordon: simulated.cordoned === true || simulated.stages.some((stage) => stage.cordon),
      drain: simulated.stages.some((stage) => stage.drain),
      statusOnApply: simulation.statusOnApply[node] ?? 'unknown',
      statusAtEnd,
      blockers,
    };
    if (simulated.batch !== undefined) row.batch = simulated.batch;
    if (interrupts.length > 0) row.interrupt = [...new Set(interrupts)].join(', ');
    return row;
  });
  planned.sort((a, b) => (a.batch ?? Infinity) - (b.batch ?? Infinity) || compareText(a.node, b.node));
  const compartments = Object.entries(simulation.skyhookStatusOnApply?.compartmentStatuses ?? {})
    .map(([name, status]) => ({ name, matched: status.matched, ceiling: status.ceiling }))
    .sort((a, b) => compareText(a.name, b.name));
  return {
    skyhook: nameOf(skyhook),
    priority: skyhook.spec.priority ?? 200,
    paused: skyhook.metadata.annotations?.[SKYHOOK_ANNOTATIONS.pause] === 'true',
    disabled: skyhook.metadata.annotations?.[SKYHOOK_ANNOTATIONS.disable] === 'true',
    problems: skyhookSpecProblems(skyhook.spec),
    compartments,
    selected: planned.length,
    total: nodeNames.length,
    nodes: planned,
    notSelected: nodeNames.filter((name) => simulation.nodes[name] === undefined).sort(),
    completes: planned.every((node) => node.statusAtEnd === 'complete'),
    truncated: simulation.truncated,
  };
}

export function describeInterrupt(interrupt: Interrupt): string {
  return interrupt.services && interrupt.services.length > 0
    ? `${interrupt.type}(${interrupt.services.join(', ')})`
    : interrupt.type;
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
