/**
 * What the NodeOp informer (shared by both controllers) keeps of each NodeOp: all of it but
 * managedFields while it may still run something, and of a finished one (the stages of a rollout,
 * kept for the SCR's retention of finished ops: an hour) its spec without what only builds its
 * Jobs, reboot pods and drains, which was most of a cached stage NodeOp. The informer transforms'
 * rules (cached-objects.ts) hold here too; cached-objects.test.ts pins what is kept.
 */
import type { NodeOp, NodeOpNodeStatus, NodeOpSpec } from '../api/nodeop.js';
import { upgradeLegacyStageFields } from '../templates/legacy-stage-fields.js';
import { compact, defined, metadataOf } from './cached-objects.js';
import { isNodeFinal } from './nodeop/aggregate.js';

/**
 * NodeOps (shared by both controllers), read as the current API reads them (a NodeOp a 0.1.0
 * operator created gets its generic fields: legacy-stage-fields.ts). Kept whole but for
 * managedFields while it may still run something; a finished one (`isFinishedNodeOp`) without the
 * parts of its spec that only build its Jobs and reboot pods (`finishedNodeOpSpec`), and compact.
 */
export function cachedNodeOp(op: NodeOp): NodeOp {
  const current = readableNodeOp(op);
  return isFinishedNodeOp(current) ? compact({ ...current, spec: finishedNodeOpSpec(current.spec) }) : current;
}

/** The NodeOp whole (but for managedFields), as the current API reads it: what a reconcile that may start a node needs. */
export function readableNodeOp(op: NodeOp): NodeOp {
  const metadata = metadataOf(op.metadata) ?? {};
  return upgradeLegacyStageFields({ ...op, metadata });
}

/**
 * A NodeOp that will start nothing more: its status says Completed or Failed, every one of its
 * targetNodes has an entry and every entry is final (Completed without a pending interrupt, or
 * Failed). A Failed NodeOp may still run other nodes; one that selects nodes by nodeSelector (no
 * targetNodes), or one of whose targetNodes has no entry (a node not created yet, one added by an
 * edit), may start a node: those keep their spec. Reads only what `finishedNodeOpSpec` keeps, so it
 * says the same of the cached NodeOp as of the NodeOp it was made from.
 */
export function isFinishedNodeOp(op: NodeOp): boolean {
  const phase = op.status?.phase;
  const targets = op.spec.targetNodes;
  if ((phase !== 'Completed' && phase !== 'Failed') || targets === undefined) return false;
  const entries: Record<string, NodeOpNodeStatus> = op.status?.nodeStatuses ?? {};
  return targets.every((node) => entries[node] !== undefined) && Object.values(entries).every(isNodeFinal);
}

/**
 * Whether a reconcile of the cached `op` with these node `entries` (its written ones and those the
 * reconciler holds back, status-write.ts) has the spec it reads: always, unless `op` is finished
 * (its spec trimmed) and an entry is not final. By `isFinishedNodeOp` every written entry is final,
 * so only an entry held back can be (a node taken out of targetNodes within seconds of its start):
 * the reconciler then reads the whole NodeOp from the API server (reconciler.ts).
 */
export function cachedSpecSuffices(op: NodeOp, entries: Record<string, NodeOpNodeStatus>): boolean {
  return !isFinishedNodeOp(op) || Object.values(entries).every(isNodeFinal);
}

/**
 * What is read of a finished NodeOp's spec. By the NodeOp controller, whose reconcile of a finished
 * NodeOp (a resync, a node event, its deletion) only ends its nodes again (node-end.ts `finish`):
 * targetNodes (pacing.ts, the NodeOpsByNode index, event-filters.ts `mayStartNodes`; a finished
 * NodeOp has no nodeSelector), cordon and uncordonOnFailure (the uncordon, the finalizer), the
 * interrupt (interrupt, rebootOnSuccess: a failed node's reboot pod is deleted), concurrency and
 * stopOnFailure (the StoppedOnFailure condition the status write compares), eventVerbosity (Events,
 * held entries) and skyhookStage (stage metrics). By the Skyhook controller: skyhookStage and
 * targetNodes (the planner's op summaries, op-summary.ts; its index by SCR; the StageFailed report,
 * failed-stage-report.ts, which lists the failed pods from the API server). The rest (image,
 * command, initSteps, env, resources, tolerations, mounts, host network, drain options, child
 * labels, backoff, timeout, preflight) is read only to build a node's Job, reboot pod or drain,
 * which a finished NodeOp never does again (the reconciler reads the whole NodeOp from the API
 * server if it ever must: reconciler.ts). `command` is required by the type, and left empty.
 * Idempotent, so that two NodeOps compare by it whether or not either was trimmed (nodeop-reads.ts).
 */
export function finishedNodeOpSpec(spec: NodeOpSpec): NodeOpSpec {
  return defined({
    targetNodes: spec.targetNodes,
    command: [],
    cordon: spec.cordon,
    uncordonOnFailure: spec.uncordonOnFailure,
    rebootOnSuccess: spec.rebootOnSuccess,
    interrupt: spec.interrupt,
    concurrency: spec.concurrency,
    stopOnFailure: spec.stopOnFailure,
    eventVerbosity: spec.eventVerbosity,
    skyhookStage: spec.skyhookStage,
  });
}
