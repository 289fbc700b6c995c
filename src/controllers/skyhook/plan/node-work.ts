/**
 * One SCR on one node within a planning pass: the node's record (state and ops), and the steps that
 * move it on (op outcomes, op deletions, stages started once the rollout has admitted the node). Each
 * step returns the new state or ops and leaves the record it is given as it was.
 */
import type { Package } from '../../../api/skyhook.js';
import { parseDurationMs } from '../../../util/duration.js';
import { packageConfigMapName } from './config-cycle.js';
import { nodeAnnotations } from '../../../api/names.js';
import { packageKey, type NodeSkyhookRecord, type NodeState, type PackageStatus } from '../../../api/node-state.js';
import type {
  CreateStageOp,
  DeleteStageOp,
  NodeView,
  PlannerEvent,
  PlannerSettings,
  StageOpSummary,
} from './planner-types.js';
import type { NodePackagesPlan, StageTarget } from './stage-machine.js';
import { isLive } from './stage-machine.js';
import { entryIdentity, recordOpOutcome, withRestarts } from './state-transitions.js';

export interface NodeWork {
  node: NodeView;
  record: NodeSkyhookRecord;
  state: NodeState;
  /** This SCR's ops on the node; an op this pass deletes is flagged `deleting`. */
  ops: StageOpSummary[];
  /** Finished ops whose outcome this pass writes (their uids join `recordedOps_` in the same patch). */
  recorded: StageOpSummary[];
  /** The uids the node's `recordedOps_<scr>` listed when the pass began. */
  recordedUids: ReadonlySet<string>;
}

/** The uids in the node's `recordedOps_<scr>` annotation. */
export function recordedOpUids(node: NodeView, skyhook: string): Set<string> {
  const value = node.annotations[nodeAnnotations.recordedOps(skyhook)] ?? '';
  return new Set(value.split(',').filter((uid) => uid !== ''));
}

/**
 * The new `recordedOps_<scr>` value when this pass records an op not listed yet: the uids of the
 * node's finished ops (all recorded once the pass is applied), which also drops the uids of ops
 * that are gone. Undefined when nothing new is recorded: a uid of a deleted op left behind is
 * harmless, and dropping it alone is not worth a write (`rewrite`: a value we cannot have written goes).
 */
export function recordedOpsUpdate(work: NodeWork, rewrite = false): string | undefined {
  const listed = work.recordedUids;
  const finished = work.ops
    .filter((op) => (op.phase === 'Completed' || op.phase === 'Failed') && op.uid !== '')
    .map((op) => op.uid);
  if (!rewrite && finished.every((uid) => listed.has(uid))) return undefined;
  return [...new Set(finished)].sort().join(',');
}

/** The node's state once its finished ops' outcomes are in, the ops this pass records, and their Events. */
export interface OpOutcomes {
  state: NodeState;
  recorded: StageOpSummary[];
  events: PlannerEvent[];
}

/** Writes the outcome of finished ops not yet recorded, and in-flight failures, into the state. */
export function absorbOpOutcomes(work: NodeWork): OpOutcomes {
  const events: PlannerEvent[] = [];
  const recorded = [...work.recorded];
  let state = work.state;
  for (const op of work.ops) {
    const finished = op.phase === 'Completed' || op.phase === 'Failed';
    if (finished && op.recorded) continue;
    if (!finished && op.restarts === 0) continue;
    const before = state;
    state = recordOpOutcome(state, op);
    if (!finished) continue;
    recorded.push(op);
    if (before !== state) events.push(outcomeEvent(work.node.name, op));
  }
  return { state, recorded, events };
}

const STAGE_OUTCOME_PREFIX = 'Package [';

/**
 * A stage that completed, said on the node. Recorded only when the stage completed the node (with
 * the node's completion, see pass-writeback.ts): each Event is an API write, and a stage's success is
 * already shown by the node's `nodeState_` annotation, the SCR's `status.nodeState` and the Completed
 * NodeOp and Job (kept 1 h). A failed stage is a Warning and is always recorded.
 */
export const isStageDoneEvent = (event: PlannerEvent): boolean =>
  event.reason === 'State' &&
  event.type === 'Normal' &&
  event.involved.kind === 'Node' &&
  event.message.startsWith(STAGE_OUTCOME_PREFIX);

function outcomeEvent(node: string, op: StageOpSummary): PlannerEvent {
  const outcome = op.phase === 'Completed' ? 'complete' : 'erroring';
  const detail = op.failureReason === 'DeadlineExceeded' ? ' (stage timed out)' : op.message ? ` (${op.message})` : '';
  return {
    kind: 'event',
    involved: { kind: 'Node', name: node },
    type: op.phase === 'Completed' ? 'Normal' : 'Warning',
    reason: 'State',
    message: `${STAGE_OUTCOME_PREFIX}${op.package}:${op.version}] state ${outcome} on [skyhook:${op.skyhook}] stage [${op.stage}]${detail}`,
  };
}

/** The ops with `op` flagged `deleting` (so nothing else in this pass plans around it), and the action deleting it. */
export function deleteOp(
  ops: StageOpSummary[],
  op: StageOpSummary,
  reason: string,
): { ops: StageOpSummary[]; action: DeleteStageOp } {
  return {
    ops: ops.map((candidate) => (candidate === op ? { ...candidate, deleting: true } : candidate)),
    action: { kind: 'deleteStageOp', name: op.name, reason },
  };
}

/** `deleteOp` for each of `doomed` in turn, all for the same reason. */
export function deleteOps(
  work: NodeWork,
  doomed: StageOpSummary[],
  reason: string,
): { work: NodeWork; deletes: DeleteStageOp[] } {
  let ops = work.ops;
  const deletes: DeleteStageOp[] = [];
  for (const op of doomed) {
    const deleted = deleteOp(ops, op, reason);
    ops = deleted.ops;
    deletes.push(deleted.action);
  }
  return { work: doomed.length === 0 ? work : { ...work, ops }, deletes };
}

export interface NodeActions {
  creates: CreateStageOp[];
  deletes: DeleteStageOp[];
  /** Milliseconds until a retry backoff ends, if one is pending. */
  requeueAfterMs?: number;
}

/** An admitted node moved forward: its state and ops as they are once `creates` and `deletes` are applied. */
export interface AdvancedNode extends NodeActions {
  state: NodeState;
  ops: StageOpSummary[];
}

/**
 * For an admitted node: start what the stage machine says may start (one package at a time with
 * `serial`), clear the ops that hold a stage's name, and note when a backoff ends.
 */
export function advanceAdmittedNode(
  work: NodeWork,
  plan: NodePackagesPlan,
  skyhook: string,
  serial: boolean,
  settings: PlannerSettings,
  now: number,
): AdvancedNode {
  const advanced: AdvancedNode = { state: work.state, ops: work.ops, creates: [], deletes: [] };
  for (const step of plan.steps) {
    if (step.kind === 'replace') {
      const deleted = deleteOp(advanced.ops, step.op, step.reason);
      advanced.ops = deleted.ops;
      advanced.deletes.push(deleted.action);
    }
    if (step.kind === 'wait' && step.until !== undefined) {
      advanced.requeueAfterMs = Math.min(advanced.requeueAfterMs ?? Infinity, step.until - now);
    }
    if (step.kind !== 'start' || (serial && advanced.creates.length > 0)) continue;
    advanced.state = {
      ...advanced.state,
      [packageKey(step.target.name, step.target.version)]: stageEntry(step.target),
    };
    advanced.creates.push(createStageOp(skyhook, work.node.name, step.target, settings));
  }
  return advanced;
}

/** The state with the entry of a running op that was never written (a write lost in a crash) written now. */
export function recordRunningStages(state: NodeState, plan: NodePackagesPlan): NodeState {
  let next = state;
  for (const step of plan.steps) {
    if (step.kind !== 'running') continue;
    const key = packageKey(step.target.name, step.target.version);
    const entry = next[key];
    if (entry === undefined || entry.stage !== step.op.stage || entry.state === 'complete')
      next = { ...next, [key]: stageEntry(step.target) };
  }
  return next;
}

export const liveOps = (work: NodeWork): StageOpSummary[] => work.ops.filter(isLive);

/** A retry (restarts kept) stays erroring until it succeeds, so the failure stays visible meanwhile. */
function stageEntry(target: StageTarget): PackageStatus {
  const state = target.restarts > 0 ? 'erroring' : 'in_progress';
  return withRestarts({ ...entryIdentity(target.name, target), stage: target.stage, state }, target.restarts);
}

function createStageOp(skyhook: string, node: string, target: StageTarget, settings: PlannerSettings): CreateStageOp {
  const op: CreateStageOp = {
    kind: 'createStageOp',
    skyhook,
    node,
    package: { name: target.name, version: target.version, image: target.image },
    stage: target.stage,
    previousRestarts: target.restarts,
  };
  if (target.containerSHA) op.package.containerSHA = target.containerSHA;
  if (target.interrupt) op.interrupt = target.interrupt;
  if (Object.keys(target.spec?.configMap ?? {}).length > 0)
    op.configMap = packageConfigMapName(skyhook, target.name, target.version);
  const timeout = stageTimeoutSeconds(target.spec, settings.defaultStageTimeoutSeconds);
  if (timeout > 0) op.stageTimeoutSeconds = timeout;
  return op;
}

/** The package's stageTimeout rounded up to whole seconds (at least 1); unset → the default; 0 → none. */
export function stageTimeoutSeconds(spec: Package | undefined, fallback: number): number {
  if (spec?.stageTimeout === undefined) return fallback;
  let ms: number;
  try {
    ms = parseDurationMs(spec.stageTimeout);
  } catch {
    return fallback;
  }
  return ms === 0 ? 0 : Math.max(1, Math.ceil(ms / 1000));
}

/**
 * Finished ops whose outcome is recorded and whose retention has passed, to delete, and when the
 * next one expires (for a requeue). An op not yet recorded is kept whatever its age: its outcome
 * still has to reach the node's state.
 */
export function expiredOps(
  work: NodeWork,
  retention: PlannerSettings['finishedOpRetentionMs'],
  now: number,
): { expired: StageOpSummary[]; nextExpiry?: number } {
  const expired: StageOpSummary[] = [];
  let nextExpiry: number | undefined;
  for (const op of work.ops) {
    if (!op.recorded || op.deleting || op.finishedAt === undefined) continue;
    const keep = op.phase === 'Completed' ? retention.succeeded : op.phase === 'Failed' ? retention.failed : undefined;
    if (keep === undefined) continue;
    const expiry = op.finishedAt + keep;
    if (expiry <= now) expired.push(op);
    else nextExpiry = Math.min(nextExpiry ?? Infinity, expiry);
  }
  return nextExpiry === undefined ? { expired } : { expired, nextExpiry };
}
