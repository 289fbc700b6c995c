/**
 * The last node phases of a pass (plan-skyhook.ts): cordons released, holds reported, and each
 * node's state and status written back, with the Events that go with them. Each returns the
 * actions it plans; `orderSteps` (action-order.ts) decides when they are applied.
 */
import { nodeAnnotations } from '../../../api/names.js';
import { nodeSkyhookConditions, serializeNodeState, type SkyhookStatusValue } from '../../../api/node-state.js';
import { holdAnnotations, type NodeHold, type NodeHoldReport } from './node-holds.js';
import { garbledNodeRecords, garbledRecordsEvent } from './node-record-checks.js';
import { isStageDoneEvent, recordedOpsUpdate, type NodeWork } from './node-work.js';
import type {
  DrainBlocker,
  PlannerEvent,
  ReleaseNodeCordon,
  ReportFailedStage,
  SetNodeAnnotations,
  SuspendStageOp,
} from './planner-types.js';
import type { NodeWrite } from './action-order.js';
import { podWait } from './non-interrupt-wait.js';
import { memo } from './plan-cache.js';
import type { SkyhookPass } from './skyhook-pass.js';
import type { GateDecision } from './health-gate-plan.js';

/** The cordon is held until the node is complete for this SCR or past its beforeUncordon gates (or no longer targeted). */
export function releaseCordons(
  pass: SkyhookPass,
  nodeStatus: Record<string, SkyhookStatusValue>,
  gates: ReadonlyMap<string, GateDecision>,
): ReleaseNodeCordon[] {
  const { name, claim, targetedNames } = pass;
  const releases: ReleaseNodeCordon[] = [];
  for (const node of pass.nodes) {
    if (!Object.hasOwn(node.annotations, claim)) continue;
    const released = nodeStatus[node.name] === 'complete' || gates.get(node.name)?.release === true;
    if (targetedNames.has(node.name) && !released) continue;
    releases.push({
      kind: 'releaseNodeCordon',
      node: node.name,
      claim,
      reason: !targetedNames.has(node.name)
        ? `node no longer targeted by Skyhook ${name}`
        : nodeStatus[node.name] === 'complete'
          ? `Skyhook ${name} complete on the node`
          : `Skyhook ${name} done on the node and its beforeUncordon gates passed`,
    });
  }
  return releases;
}

/** Complete nodes and nodes no longer targeted leave the priority record. */
export function keptPriority(
  pass: SkyhookPass,
  priority: Record<string, string>,
  nodeStatus: Record<string, SkyhookStatusValue>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(priority).filter(([node]) => pass.targetedNames.has(node) && nodeStatus[node] !== 'complete'),
  );
}

export interface HoldWrites {
  reports: NodeHoldReport[];
  actions: SetNodeAnnotations[];
  events: PlannerEvent[];
  /** When a wait for non-interruptible pods passes its warning threshold. */
  requeueAfterMs?: number;
}

/**
 * Each node's hold (none once complete) and drain blockers, as annotations and Events; a wait for
 * non-interruptible pods with its start, and its warning once past the threshold.
 */
export function reportHolds(
  pass: SkyhookPass,
  works: NodeWork[],
  nodeStatus: Record<string, SkyhookStatusValue>,
  holds: Map<string, NodeHold>,
  drainBlockers: Map<string, DrainBlocker[]>,
  podHolds: ReadonlyMap<string, string[]>,
): HoldWrites {
  let requeueAfterMs: number | undefined;
  const reports = works.map((work): NodeHoldReport => {
    const report: NodeHoldReport = { node: work.node, drainBlockers: drainBlockers.get(work.node.name) ?? [] };
    const held = nodeStatus[work.node.name] === 'complete' ? undefined : holds.get(work.node.name);
    const wait = podWait(pass.name, pass.spec, work.node, held, podHolds.get(work.node.name), pass.now);
    if (wait.hold) report.hold = wait.hold;
    if (wait.since !== undefined) report.podWaitSince = wait.since;
    if (wait.requeueAfterMs !== undefined)
      requeueAfterMs = Math.min(requeueAfterMs ?? wait.requeueAfterMs, wait.requeueAfterMs);
    return report;
  });
  const written = { reports, ...holdAnnotations(pass.name, reports) };
  return requeueAfterMs === undefined ? written : { ...written, requeueAfterMs };
}

export interface NodeWriteBack {
  /** Writes of nodes not newly taking a budget slot. */
  nodeWrites: NodeWrite[];
  /** Writes of nodes newly taking a budget slot (in_progress or erroring now, not before). */
  slotTakers: NodeWrite[];
  /** `events` given, with garbled-record and completion Events added. */
  events: PlannerEvent[];
}

const takesSlot = (status: SkyhookStatusValue | undefined): boolean =>
  status === 'in_progress' || status === 'erroring';

/** Each node's state and status (one patch per node), and the Events of nodes that completed. */
export function writeBack(
  pass: SkyhookPass,
  works: NodeWork[],
  nodeStatus: Record<string, SkyhookStatusValue>,
  earlierEvents: PlannerEvent[],
  gates: ReadonlyMap<string, GateDecision> = new Map(),
): NodeWriteBack {
  const out: NodeWriteBack = { nodeWrites: [], slotTakers: [], events: [...earlierEvents] };
  const completions = new Set<PlannerEvent>();
  for (const work of works) {
    const status = nodeStatus[work.node.name]!;
    const failure = gates.get(work.node.name)?.failure;
    // Unchanged node, status and gate failure: the same writes as last pass (plan-cache.ts).
    const node = memo(pass.cache, work.node.name, 'writeBack', [work, status, failure], () =>
      nodeWriteBack(pass, work, status, failure),
    );
    (node.slotTaker ? out.slotTakers : out.nodeWrites).push(...node.writes);
    if (node.garbled) out.events.push(node.garbled);
    if (node.completes) {
      const done = withCompletion(out.events, work, pass.name);
      out.events = done.events;
      completions.add(done.completion);
    }
  }
  // A stage's success is an Event only in the node's completion (isStageDoneEvent says why).
  out.events = out.events.filter((event) => completions.has(event) || !isStageDoneEvent(event));
  return out;
}

interface NodeWriteOutcome {
  slotTaker: boolean;
  writes: NodeWrite[];
  garbled?: PlannerEvent;
  /** The node completes with this pass: its completion Event is added to the pass's. */
  completes: boolean;
}

function nodeWriteBack(
  pass: SkyhookPass,
  work: NodeWork,
  status: SkyhookStatusValue,
  failure: string | undefined,
): NodeWriteOutcome {
  const { name, settings } = pass;
  const writes: NodeWrite[] = [];
  const garbled = garbledNodeRecords(work.node, name);
  if (!work.record.malformed) writes.push(...stateWrites(pass, work, garbled.recordedOps));
  const rewritten = [
    ...garbled.status,
    ...(garbled.recordedOps ? [`annotation ${nodeAnnotations.recordedOps(name)}`] : []),
  ];
  const out: NodeWriteOutcome = {
    slotTaker: takesSlot(status) && !takesSlot(work.record.status),
    writes,
    completes: false,
  };
  if (rewritten.length > 0) out.garbled = garbledRecordsEvent(work.node.name, name, rewritten);
  if (status === work.record.status && work.record.version === settings.operatorVersion && rewritten.length === 0)
    return out;
  writes.push({
    kind: 'setNodeStatus',
    node: work.node.name,
    skyhook: name,
    status,
    operatorVersion: settings.operatorVersion,
    conditions: nodeSkyhookConditions(name, status === 'complete', work.state, failure),
  });
  out.completes = status === 'complete' && work.record.status !== 'complete';
  return out;
}

/** The node's state, and next to it (one patch: an outcome and its mark land together) the ops it records. */
function stateWrites(pass: SkyhookPass, work: NodeWork, garbledRecordedOps: boolean): NodeWrite[] {
  const { name } = pass;
  const writes: NodeWrite[] = [];
  const annotation = serializeNodeState(work.state);
  const current = work.node.annotations[nodeAnnotations.nodeState(name)];
  if (annotation !== (current ?? '{}'))
    writes.push({ kind: 'writeNodeState', node: work.node.name, skyhook: name, state: work.state, annotation });
  const recordedOps = recordedOpsUpdate(work, garbledRecordedOps);
  if (recordedOps !== undefined)
    writes.push({
      kind: 'setNodeAnnotations',
      node: work.node.name,
      annotations: { [nodeAnnotations.recordedOps(name)]: recordedOps },
    });
  return writes;
}

/** Said in the Event of the stage that completed the node when there is one (one Event, not two). */
function withCompletion(
  events: PlannerEvent[],
  work: NodeWork,
  skyhook: string,
): { events: PlannerEvent[]; completion: PlannerEvent } {
  const done = `Skyhook [${skyhook}] complete.`;
  const index = events.findLastIndex(
    (event) =>
      event.involved.kind === 'Node' &&
      event.involved.name === work.node.name &&
      event.reason === 'State' &&
      event.type === 'Normal',
  );
  if (index === -1) {
    const completion: PlannerEvent = {
      kind: 'event',
      involved: { kind: 'Node', name: work.node.name },
      type: 'Normal',
      reason: 'State',
      message: done,
    };
    return { events: [...events, completion], completion };
  }
  const lastStage = events[index]!;
  const completion = { ...lastStage, message: `${lastStage.message}. ${done}` };
  return { events: events.with(index, completion), completion };
}

/** Pause suspends the SCR's unfinished ops; resume lifts it. */
export function suspendOps(pass: SkyhookPass): SuspendStageOp[] {
  return pass.ops
    .filter(
      (op) =>
        (op.phase === 'Pending' || op.phase === 'Running') && !op.deleting && (op.suspended === true) !== pass.paused,
    )
    .map((op) => ({ kind: 'suspendStageOp', name: op.name, suspend: pass.paused }));
}

/** A Warning Event for each failed op whose outcome this pass records. */
export function failureReports(works: NodeWork[]): ReportFailedStage[] {
  return works.flatMap((work) =>
    work.recorded
      .filter((op) => op.phase === 'Failed')
      .map((op) => ({ kind: 'reportFailedStage' as const, name: op.name })),
  );
}
