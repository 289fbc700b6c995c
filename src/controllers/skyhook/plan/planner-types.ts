/**
 * The planner's contract with the reconciler: what it is given (a snapshot of the cluster as the
 * informer caches see it) and what it asks for (actions the reconciler applies in order). Plain data
 * only, so the planner stays a pure function and the reconciler can be written against these types.
 */
import type { DeploymentPolicy } from '../../../api/deployment-policy.js';
import type { HealthGateResults } from '../../../api/health-gates.js';
import type { DisruptionBudget } from '../../../api/disruption-budget.js';
import { DEFAULT_RUNTIME_REQUIRED_TAINT } from '../../../api/names.js';
import type { DrainOptions, NodeOpPhase } from '../../../api/nodeop.js';
import type { PackageTrustResults } from './package-trust.js';
import type { Interrupt, Skyhook, SkyhookStatus } from '../../../api/skyhook.js';
import type { NodeConditionValue, NodeState, PackageStage, SkyhookStatusValue } from '../../../api/node-state.js';

export interface PlannerInput {
  /** Milliseconds since the epoch; every deadline and backoff is computed from it. */
  now: number;
  skyhooks: SkyhookInput[];
  /** Every node of the cluster (the planner matches selectors itself). */
  nodes: NodeView[];
  /** The stage NodeOps of every SCR (NodeOps without a skyhookStage are not passed). */
  stageOps: StageOpSummary[];
  settings?: Partial<PlannerSettings>;
  /** Only this SCR's actions (earlier SCRs by priority are still planned: they hold it back; later ones are not). */
  only?: string;
  /** Every DeploymentPolicy; an SCR naming one not here is blocked (DeploymentPolicyNotFound): pass them. */
  deploymentPolicies?: DeploymentPolicy[];
  /** The DeploymentPolicies' health gates as evaluated now (views/health-gates/); absent = none checked. */
  healthGates?: HealthGateResults;
  /** Every DisruptionBudget: a node an interrupt would newly disrupt waits while one covering it is full. */
  disruptionBudgets?: DisruptionBudget[];
  /** The PackageTrustPolicies' decisions, by SCR and package version (controllers/trust/); absent = none cover. */
  packageTrust?: PackageTrustResults;
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
  /** `spec.unschedulable`: the node is cordoned (by us, another SCR, a NodeOp or a person). */
  unschedulable?: boolean;
  /** Pods bound to the node, for the non-interruptible barrier. Absent: unknown, or no opted-in pod. */
  pods?: PodView[];
}

/** What the planner needs of a pod on a node. */
export interface PodView {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  /** `status.phase`: Pending, Running, Succeeded, Failed, Unknown. */
  phase: string;
  /** Kind of the controller ownerReference (`ReplicaSet`, `DaemonSet`, …); absent when none. */
  ownerKind?: string;
  /** Being deleted (`deletionTimestamp` set). */
  terminating?: boolean;
  /** The workload opted the pod in with `skyhook.nvidia.com/non-interruptible: "true"`. */
  nonInterruptible?: boolean;
}

/** A pod that keeps a drain from finishing, as the stage op's drain reports it. */
export interface DrainBlocker {
  namespace: string;
  name: string;
  /** `PodDisruptionBudget`, `UnmanagedPod`, `EmptyDirData`, `DaemonSet`, `Terminating`, or another short reason. */
  reason: string;
  /** The API server's text for a PDB refusal, else a human-readable explanation. */
  detail?: string;
}

export interface TaintView {
  key: string;
  value?: string;
  effect: string;
}

/** One stage NodeOp (and so one Job) for one SCR × node × package version × stage. */
export interface StageOpSummary {
  /** The NodeOp's name, for delete/suspend actions. */
  name: string;
  /** The NodeOp's uid: names are reused (a retry, a config re-run), uids are not. */
  uid: string;
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
  /** The op's result is in node state (its uid is in the node's `recordedOps_<scr>`; the planner sets this). */
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
  /** Pods the op's drain is waiting for (a PDB refusing eviction, pods the drain options forbid removing…). */
  drainBlockers?: DrainBlocker[];
}

export interface PlannerSettings {
  /** Written to `version_<scr>` on every node the planner writes status for. */
  operatorVersion: string;
  /** Deadline of a stage attempt when the package sets no stageTimeout (upstream JOB_STAGE_TIMEOUT); 0 = none. */
  defaultStageTimeoutSeconds: number;
  /** Retry delay after a failed stage: min(max, base × 2^(restarts−1)), like kubelet's crash loop. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** RUNTIME_REQUIRED_TAINT (`key=value:effect`), parsed. */
  runtimeRequiredTaint: TaintView;
  /**
   * A finished stage op whose outcome is recorded is deleted this long after it finished (its Job's
   * own retention), so ops do not pile up over the versions and config changes of a long life.
   */
  finishedOpRetentionMs: { succeeded: number; failed: number };
}

export const DEFAULT_PLANNER_SETTINGS: PlannerSettings = {
  operatorVersion: 'v0.13.0',
  defaultStageTimeoutSeconds: 3600,
  retryBaseMs: 10_000,
  retryMaxMs: 300_000,
  runtimeRequiredTaint: { ...DEFAULT_RUNTIME_REQUIRED_TAINT },
  finishedOpRetentionMs: { succeeded: 3_600_000, failed: 86_400_000 },
};

export interface PlanResult {
  /** To be applied in order; why this order is safe at every crash point: action-order.ts. */
  actions: PlannerAction[];
  /**
   * The same actions cut into steps (`actions` is `steps.flat()`): a step's actions are independent
   * of each other, and each step comes after every action of the steps before it (action-order.ts).
   */
  steps: PlannerAction[][];
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
  | ReportFailedStage
  | SetSkyhookStatus
  | PlannerEvent
  | CordonNode
  | ReleaseNodeCordon
  | SetNodeAnnotations
  | AddNodeTaint
  | RemoveNodeTaint;

/**
 * Cordon (`spec.unschedulable: true`). With `claim`, also set annotation `claim` = `"true"` (this
 * SCR's `cordon_<scr>`, or the runtimeRequiredCordon one): the claim is what lets us lift the cordon
 * later. Without `claim` the node is already cordoned by someone else (nothing to write: skip).
 */
export interface CordonNode {
  kind: 'cordonNode';
  node: string;
  claim: string;
  reason: string;
}

/**
 * Drop the claim annotation `claim`; uncordon only if, on the node as read at write time, no other
 * claim remains (see `cordonAfterRelease` in jobs/cordon/claims.ts): two SCRs finishing at once must not
 * both leave the node cordoned by nobody, nor either uncordon it under the other.
 */
export interface ReleaseNodeCordon {
  kind: 'releaseNodeCordon';
  node: string;
  claim: string;
  reason: string;
}

/** Merge-patch node annotations: a string sets, `null` removes. */
export interface SetNodeAnnotations {
  kind: 'setNodeAnnotations';
  node: string;
  annotations: Record<string, string | null>;
}

/** Add a taint unless one with the same key and effect exists; with `annotations`, set those in the same patch. */
export interface AddNodeTaint {
  kind: 'addNodeTaint';
  node: string;
  taint: TaintView;
  annotations?: Record<string, string>;
}

/** Remove the taint with this key, value and effect (if still there). */
export interface RemoveNodeTaint {
  kind: 'removeNodeTaint';
  node: string;
  taint: TaintView;
}

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
  /**
   * Set on the stages of a package whose cycle ends in an interrupt. The planner has already
   * cordoned the node under its own claim, so the NodeOp finds it cordoned by someone else and
   * never lifts it; `cordon: true` is what the NodeOp schema requires for a drain.
   */
  cordon?: boolean;
  /** Drain before the Job (drainConfig with newer upstream's defaults filled in); `enabled` is true. */
  drain?: DrainOptions;
  /** `sha256:<hex>` a PackageTrustPolicy verified: the package container runs `image@<digest>`, never the tag. */
  pinnedDigest?: string;
}

/** A Warning Event on the SCR with the failed op's container, exit and log tail (read from the cluster). */
export interface ReportFailedStage {
  kind: 'reportFailedStage';
  name: string;
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
