/**
 * The planner's contract with the reconciler: what it is given (a snapshot of the cluster as the
 * informer caches see it) and what it asks for (actions the reconciler applies in order). Plain data
 * only, so the planner stays a pure function and the reconciler can be written against these types.
 */
import type { NodeOpPhase } from '../../api/nodeop.js';
import type { Interrupt, Skyhook, SkyhookStatus } from '../../api/skyhook.js';
import type { NodeConditionValue, NodeState, PackageStage, SkyhookStatusValue } from './node-state.js';

export interface PlannerInput {
  /** Milliseconds since the epoch; every deadline and backoff is computed from it. */
  now: number;
  skyhooks: SkyhookInput[];
  /** Every node of the cluster (the planner matches selectors itself). */
  nodes: NodeView[];
  /** The stage NodeOps of every SCR (NodeOps without a skyhookStage are not passed). */
  stageOps: StageOpSummary[];
  settings?: Partial<PlannerSettings>;
}

export interface SkyhookInput {
  skyhook: Skyhook;
  /**
   * Data of the package ConfigMaps that exist, keyed `"<pkg>|<version>"`: what the last config
   * cycle delivered. A missing key means the ConfigMap does not exist yet.
   */
  packageConfigMaps: Record<string, Record<string, string>>;
}

export interface NodeView {
  name: string;
  /** Milliseconds since the epoch; upstream works through nodes oldest first. */
  createdAt: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: TaintView[];
}

export interface TaintView {
  key: string;
  value?: string;
  effect: string;
}

/** One stage NodeOp (and so one Job) for one SCR × node × package version × stage. */
export interface StageOpSummary {
  /** The NodeOp's name, for delete/suspend/mark actions. */
  name: string;
  skyhook: string;
  node: string;
  package: string;
  version: string;
  /** The package image the op runs (recorded in the entry if the entry is missing). */
  image: string;
  containerSHA?: string;
  stage: PackageStage;
  phase: NodeOpPhase;
  /** Failed attempts of this op so far. */
  restarts: number;
  /** The package entry's restart count when the op was created (createStageOp.previousRestarts). */
  previousRestarts: number;
  /** The op's result has been written to node state (the reconciler marks it after markStageOpRecorded). */
  recorded: boolean;
  /** Being deleted: its name cannot be reused yet. */
  deleting?: boolean;
  suspended?: boolean;
  /** The op no longer matches the SCR's spec for its package (image, env, resources…): replace it. */
  stale?: boolean;
  /** Milliseconds since the epoch. */
  finishedAt?: number;
  /** Why a Failed op failed, e.g. `DeadlineExceeded` when the stageTimeout expired. */
  failureReason?: string;
  message?: string;
}

export interface PlannerSettings {
  /** Written to `version_<scr>` on every node the planner writes status for. */
  operatorVersion: string;
  /** Deadline of a stage attempt when the package sets no stageTimeout (upstream JOB_STAGE_TIMEOUT); 0 = none. */
  defaultStageTimeoutSeconds: number;
  /** Retry delay after a failed stage: min(max, base × 2^(restarts−1)), like kubelet's crash loop. */
  retryBaseMs: number;
  retryMaxMs: number;
}

export const DEFAULT_PLANNER_SETTINGS: PlannerSettings = {
  operatorVersion: 'v0.13.0',
  defaultStageTimeoutSeconds: 3600,
  retryBaseMs: 10_000,
  retryMaxMs: 300_000,
};

export interface PlanResult {
  /** To be applied in order (ConfigMaps before the ops that mount them, node state before marking ops recorded). */
  actions: PlannerAction[];
  /** Plan again after this long even if nothing changes (a retry backoff expiring). */
  requeueAfterMs?: number;
}

export type PlannerAction =
  | UpsertPackageConfigMap
  | WriteNodeState
  | SetNodeStatus
  | DeleteStageOp
  | SuspendStageOp
  | CreateStageOp
  | MarkStageOpRecorded
  | SetSkyhookStatus
  | PlannerEvent;

export interface UpsertPackageConfigMap {
  kind: 'upsertPackageConfigMap';
  skyhook: string;
  package: string;
  version: string;
  data: Record<string, string>;
}

/** Replace the whole `nodeState_<scr>` annotation (one JSON string) with `annotation`. */
export interface WriteNodeState {
  kind: 'writeNodeState';
  node: string;
  skyhook: string;
  state: NodeState;
  annotation: string;
}

/** Set `status_<scr>` (label and annotation), `version_<scr>` and the two node conditions. */
export interface SetNodeStatus {
  kind: 'setNodeStatus';
  node: string;
  skyhook: string;
  status: SkyhookStatusValue;
  operatorVersion: string;
  conditions: NodeConditionValue[];
}

export interface DeleteStageOp {
  kind: 'deleteStageOp';
  name: string;
  reason: string;
}

/** Pause suspends the SCR's unfinished ops; resume lifts it. */
export interface SuspendStageOp {
  kind: 'suspendStageOp';
  name: string;
  suspend: boolean;
}

export interface CreateStageOp {
  kind: 'createStageOp';
  skyhook: string;
  node: string;
  package: { name: string; version: string; image: string; containerSHA?: string };
  stage: PackageStage;
  /** The interrupt to perform, on `interrupt` stages only. */
  interrupt?: Interrupt;
  /** Name of the package's ConfigMap when the package has a configMap. */
  configMap?: string;
  /** Deadline of one attempt (ceil of stageTimeout); omitted for no deadline. */
  stageTimeoutSeconds?: number;
  /** Carried on the op so failed attempts add to the entry's restart count after a retry. */
  previousRestarts: number;
}

/** The op's outcome is now in node state: do not apply it again (and let its TTL run). */
export interface MarkStageOpRecorded {
  kind: 'markStageOpRecorded';
  name: string;
  phase: NodeOpPhase;
}

/** The whole new `status` of the SCR (fields the planner does not own are carried over). */
export interface SetSkyhookStatus {
  kind: 'setSkyhookStatus';
  skyhook: string;
  status: SkyhookStatus;
}

export interface PlannerEvent {
  kind: 'event';
  involved: { kind: 'Node' | 'Skyhook'; name: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

