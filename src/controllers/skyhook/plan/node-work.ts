/**
 * One SCR on one node within a planning pass: the node's state as it evolves (op outcomes, version
 * changes, config cycles, stages started), and the actions that move it forward once the rollout has
 * admitted the node.
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

/** Writes the outcome of finished ops not yet recorded, and in-flight failures, into the state. */
export function absorbOpOutcomes(work: NodeWork): PlannerEvent[] {
  const events: PlannerEvent[] = [];
  for (const op of work.ops) {
    const finished = op.phase === 'Completed' || op.phase === 'Failed';
    if (finished && op.recorded) continue;
    if (!finished && op.restarts === 0) continue;
    const before = work.state;
    work.state = recordOpOutcome(work.state, op);
    if (!finished) continue;
    work.recorded.push(op);
    if (before !== work.state) {
      const outcome = op.phase === 'Completed' ? 'complete' : 'erroring';
      const detail =
        op.failureReason === 'DeadlineExceeded' ? ' (stage timed out)' : op.message ? ` (${op.message})` : '';
      events.push({
        kind: 'event',
        involved: { kind: 'Node', name: work.node.name },
        type: op.phase === 'Completed' ? 'Normal' : 'Warning',
        reason: 'State',
        message: `Package [${op.package}:${op.version}] state ${outcome} on [skyhook:${op.skyhook}] stage [${op.stage}]${detail}`,
      });
    }
  }
  return events;
}

/** Deletes the op within this pass too, so nothing else plans around it. */
export function deleteOp(work: NodeWork, op: StageOpSummary, reason: string): DeleteStageOp {
  work.ops = work.ops.map((candidate) => (candidate === op ? { ...candidate, deleting: true } : candidate));
  return { kind: 'deleteStageOp', name: op.name, reason };
}

export interface NodeActions {
  creates: CreateStageOp[];
  deletes: DeleteStageOp[];
  /** Milliseconds until a retry backoff ends, if one is pending. */
  requeueAfterMs?: number;
}

/**
 * For an admitted node: start what the stage machine says may start (one package at a time with
 * `serial`), clear the ops that hold a stage's name, and note when a backoff ends.
 */
export function advanceNode(
  work: NodeWork,
  plan: NodePackagesPlan,
  skyhook: string,
  serial: boolean,
  settings: PlannerSettings,
  now: number,
): NodeActions {
  const actions: NodeActions = { creates: [], deletes: [] };
  for (const step of plan.steps) {
    if (step.kind === 'replace') actions.deletes.push(deleteOp(work, step.op, step.reason));
    if (step.kind === 'wait' && step.until !== undefined) {
      actions.requeueAfterMs = Math.min(actions.requeueAfterMs ?? Infinity, step.until - now);
    }
    if (step.kind !== 'start' || (serial && actions.creates.length > 0)) continue;
    work.state = { ...work.state, [packageKey(step.target.name, step.target.version)]: stageEntry(step.target) };
    actions.creates.push(createStageOp(skyhook, work.node.name, step.target, settings));
  }
  return actions;
}

/** A running op whose entry was never written (a write lost in a crash): write it now. */
export function recordRunningStages(work: NodeWork, plan: NodePackagesPlan): void {
  for (const step of plan.steps) {
    if (step.kind !== 'running') continue;
    const key = packageKey(step.target.name, step.target.version);
    const entry = work.state[key];
    if (entry === undefined || entry.stage !== step.op.stage || entry.state === 'complete')
      work.state = { ...work.state, [key]: stageEntry(step.target) };
  }
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
