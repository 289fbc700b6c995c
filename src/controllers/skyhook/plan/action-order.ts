/**
 * The order in which one SCR's planned actions are applied, in one place. The reconciler applies
 * them in sequence and may crash between any two; each bucket comes where a crash right after it
 * leaves a state the next pass repairs, and where a watcher never sees more than the budget allows:
 *
 * 1. failureReports: before the state write that records the failure, so a crash in between
 *    repeats the Event (aggregated) rather than losing it.
 * 2. configMaps: before the ops that mount them.
 * 3. nodeWrites: node state and status (one patch per node), with the uids of the finished ops the
 *    state records (`recordedOps_<scr>`), before those ops are deleted: an outcome is never lost.
 *    Also before the ops the state announces are created (a running op whose entry a crash lost is
 *    repaired by `recordRunningStages`, node-work.ts).
 * 4. cordonReleases: the cordons of nodes now complete (or no longer targeted), before …
 * 5. slotTakers: … the state and status of nodes newly taking a budget slot, and before …
 * 6. nodeMetadata: … the cordons of admitted nodes and the hold annotations; so a watcher never
 *    sees more nodes cordoned or in progress than the budget allows.
 * 7. deletes, 8. suspends, 9. creates: ops, once the state that explains them is written.
 * 10. status: the SCR status, summing up what the node writes above made true.
 * 11. events: last; they describe what was done.
 *
 * Within one bucket the actions are independent (different nodes, ops, ConfigMaps): the writer
 * (write/apply-steps.ts) applies a bucket's actions concurrently and the buckets strictly one after
 * the other, so each crash point above stays one; `orderSteps` hands it the buckets as steps.
 */
import type {
  CordonNode,
  CreateStageOp,
  DeleteStageOp,
  PlannerAction,
  PlannerEvent,
  ReleaseNodeCordon,
  ReportFailedStage,
  SetNodeAnnotations,
  SetNodeStatus,
  SetSkyhookStatus,
  SuspendStageOp,
  UpsertPackageConfigMap,
  WriteNodeState,
} from './planner-types.js';

/** A node's state, its recorded ops, or its status. */
export type NodeWrite = WriteNodeState | SetNodeAnnotations | SetNodeStatus;

/** One SCR's actions of one pass, by what they do; `orderSteps` cuts them into steps. */
export interface ActionBuckets {
  failureReports: ReportFailedStage[];
  configMaps: UpsertPackageConfigMap[];
  nodeWrites: NodeWrite[];
  cordonReleases: ReleaseNodeCordon[];
  slotTakers: NodeWrite[];
  /** Cordons of admitted nodes and hold annotations. */
  nodeMetadata: Array<CordonNode | SetNodeAnnotations>;
  deletes: DeleteStageOp[];
  suspends: SuspendStageOp[];
  creates: CreateStageOp[];
  status?: SetSkyhookStatus;
  events: PlannerEvent[];
}

/**
 * A run of actions the writer may apply together (they are independent of each other), after every
 * action of the steps before it. The planner returns its steps, not only the flat list, because
 * two buckets may hold the same kinds (node writes and slot takers) and the writer must still keep
 * them apart.
 */
export type PlanStep = PlannerAction[];

/** The non-empty buckets, in the order the header explains. */
export function orderSteps(buckets: ActionBuckets): PlanStep[] {
  const ordered: PlanStep[] = [
    buckets.failureReports,
    buckets.configMaps,
    buckets.nodeWrites,
    buckets.cordonReleases,
    buckets.slotTakers,
    buckets.nodeMetadata,
    buckets.deletes,
    buckets.suspends,
    buckets.creates,
    buckets.status ? [buckets.status] : [],
    buckets.events,
  ];
  return ordered.filter((bucket) => bucket.length > 0);
}
