/**
 * Every name of the Skyhook API that lives outside the schemas: API group, kinds, labels,
 * annotations, finalizers and condition types. The operator, the agent's Jobs and the kubectl plugin
 * read and write these on objects other tools also look at, so they must match upstream byte for
 * byte; keeping them in one module means a typo cannot split a name in two.
 */

/** `METADATA_PREFIX` upstream: the prefix of every label, annotation, finalizer and condition type. */
export const PREFIX = 'skyhook.nvidia.com';

export const API_GROUP = PREFIX;
export const API_VERSION = 'v1alpha1';
export const GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;

export const KINDS = {
  skyhook: { kind: 'Skyhook', listKind: 'SkyhookList', plural: 'skyhooks', singular: 'skyhook' },
  deploymentPolicy: {
    kind: 'DeploymentPolicy',
    listKind: 'DeploymentPolicyList',
    plural: 'deploymentpolicies',
    singular: 'deploymentpolicy',
  },
  nodeOp: { kind: 'NodeOp', listKind: 'NodeOpList', plural: 'nodeops', singular: 'nodeop' },
  disruptionBudget: {
    kind: 'DisruptionBudget',
    listKind: 'DisruptionBudgetList',
    plural: 'disruptionbudgets',
    singular: 'disruptionbudget',
  },
  maintenancePolicy: {
    kind: 'MaintenancePolicy',
    listKind: 'MaintenancePolicyList',
    plural: 'maintenancepolicies',
    singular: 'maintenancepolicy',
  },
  packageTrustPolicy: {
    kind: 'PackageTrustPolicy',
    listKind: 'PackageTrustPolicyList',
    plural: 'packagetrustpolicies',
    singular: 'packagetrustpolicy',
    shortNames: ['ptp'],
  },
} as const;

/** Annotations a user (or the kubectl plugin) puts on a Skyhook. Only the exact value `"true"` counts. */
export const SKYHOOK_ANNOTATIONS = {
  pause: `${PREFIX}/pause`,
  disable: `${PREFIX}/disable`,
  /** The operator version, stamped by the operator on each SCR it reconciles (operator-version.ts). */
  version: `${PREFIX}/version`,
} as const;

/**
 * Annotations a workload puts on its own pods. `non-interruptible: "true"` (only that exact value)
 * protects the pod from every Skyhook's interrupts as podNonInterruptLabels does, without the
 * cluster administrator's selector having to know the workload's labels.
 */
export const POD_ANNOTATIONS = {
  nonInterruptible: `${PREFIX}/non-interruptible`,
} as const;

export const SKYHOOK_FINALIZER = `${PREFIX}/skyhook`;

/** Per-SCR node annotations; `<skyhook>` is the SCR's name. */
export const nodeAnnotations = {
  /** Compact JSON `{"<pkg>|<ver>": PackageStatus}`: the durable per-node progress of one SCR. */
  nodeState: (skyhook: string): string => `${PREFIX}/nodeState_${skyhook}`,
  /**
   * Ours: the `nodeState_` value the operator last wrote, written in the same patch. A `nodeState_`
   * that cannot be parsed (a careless edit, a truncated value) is restored from it instead of
   * blocking the node; only when this copy is missing or unreadable too is the node blocked.
   */
  nodeStateCopy: (skyhook: string): string => `${PREFIX}/nodeStateCopy_${skyhook}`,
  /** Node status for this SCR (also written as a label of the same key). */
  status: (skyhook: string): string => `${PREFIX}/status_${skyhook}`,
  /** Operator version that last wrote this node's state for the SCR. */
  version: (skyhook: string): string => `${PREFIX}/version_${skyhook}`,
  /** `"true"`: this SCR cordoned the node and owns that cordon. */
  cordon: (skyhook: string): string => `${PREFIX}/cordon_${skyhook}`,
  /** RFC3339Nano time the drain for this SCR started; drainConfig.timeout counts from it. */
  drainStart: (skyhook: string): string => `${PREFIX}/drainStart_${skyhook}`,
  /** Pods currently blocking this SCR's drain of the node. */
  drainBlocked: (skyhook: string): string => `${PREFIX}/drainBlocked_${skyhook}`,
  /** Ours: why this SCR's work on the node is held (`<Reason>: <what holds it>`); absent when nothing holds it. */
  waiting: (skyhook: string): string => `${PREFIX}/waiting_${skyhook}`,
  /**
   * Ours: RFC3339 time since which non-interruptible pods have held this SCR's interrupt on the node
   * (podNonInterruptLabels or the pod opt-in annotation); absent when they do not. Kept on the node so
   * an operator restart neither resets the wait's duration nor its warning threshold.
   */
  nonInterruptWaitSince: (skyhook: string): string => `${PREFIX}/nonInterruptWaitSince_${skyhook}`,
  /**
   * Ours: comma-separated uids of this SCR's finished stage NodeOps on the node whose outcome is in
   * `nodeState_`. Written in the same patch as the state, so an outcome is never applied twice and
   * marking it costs no write of its own.
   */
  recordedOps: (skyhook: string): string => `${PREFIX}/recordedOps_${skyhook}`,
  /** `"true"`: the operator put the runtime-required taint `<taintKey>` on a new node. */
  autoTaint: (taintKey: string): string => `${PREFIX}/autoTaint_${taintKey}`,
  /** Ours: `{"point":…,"since":…}`: the node waits on this SCR's health gates since then (a restart keeps the timeout). */
  healthGate: (skyhook: string): string => `${PREFIX}/healthGate_${skyhook}`,
} as const;

/** Prefixes to recognise the per-SCR node annotations above when scanning a node. */
export const NODE_ANNOTATION_PREFIXES = {
  nodeState: `${PREFIX}/nodeState_`,
  status: `${PREFIX}/status_`,
  version: `${PREFIX}/version_`,
  cordon: `${PREFIX}/cordon_`,
  drainStart: `${PREFIX}/drainStart_`,
  drainBlocked: `${PREFIX}/drainBlocked_`,
  waiting: `${PREFIX}/waiting_`,
  nonInterruptWaitSince: `${PREFIX}/nonInterruptWaitSince_`,
  autoTaint: `${PREFIX}/autoTaint_`,
  healthGate: `${PREFIX}/healthGate_`,
  /** Ours: `maintenance_<policy>: "true"`: a MaintenancePolicy's slot holder cordoned the node (a shared cordon claim). */
  maintenance: `${PREFIX}/maintenance_`,
} as const;

/** Node annotation of the persistent cordon set by `runtimeRequiredCordonAfter` (not per SCR). */
export const RUNTIME_REQUIRED_CORDON_ANNOTATION = `${PREFIX}/runtimeRequiredCordon`;

export const nodeLabels = {
  /** Same value as the status annotation, as a label so nodes can be selected by it. */
  status: (skyhook: string): string => `${PREFIX}/status_${skyhook}`,
} as const;

/** Node label: `"true"` makes every SCR skip the node (status `blocked`). */
export const IGNORE_NODE_LABEL = `${PREFIX}/ignore`;

/** Label the demo and samples select their nodes by. */
export const TEST_NODE_LABEL = `${PREFIX}/test-node`;

/** Runtime-required taint: `key=value:effect`, overridable by the operator's RUNTIME_REQUIRED_TAINT. */
export const DEFAULT_RUNTIME_REQUIRED_TAINT = { key: PREFIX, value: 'runtime-required', effect: 'NoSchedule' } as const;

/** Node conditions one SCR maintains on each of its nodes (`node.status.conditions`). */
export const nodeConditionTypes = {
  notReady: (skyhook: string): string => `${PREFIX}/${skyhook}/NotReady`,
  erroring: (skyhook: string): string => `${PREFIX}/${skyhook}/Erroring`,
} as const;

/**
 * SCR condition types. Newer upstream writes the bare names and mirrors each one under the
 * prefixed name for tools that still look for it; `legacyConditionType` gives that mirror.
 */
export const SKYHOOK_CONDITIONS = {
  ready: 'Ready',
  transition: 'Transition',
  applyPackage: 'ApplyPackage',
  taintNotTolerable: 'TaintNotTolerable',
  nodesIgnored: 'NodesIgnored',
  deploymentPolicyNotFound: 'DeploymentPolicyNotFound',
  blocked: 'Blocked',
  drainBlocked: 'DrainBlocked',
  nodeStateMalformed: 'NodeStateMalformed',
  /** Ours: rules the API server cannot check (dependsOn cycles, configInterrupts globs matching nothing). */
  invalidSpec: 'InvalidSpec',
  /** Ours: input accepted but probably not meant (garbage label values, budgets above the nodes, package conflicts). */
  inputWarning: 'InputWarning',
  /** Ours: nodes wait for a maintenance window to start an interrupt (reason OutsideMaintenanceWindow). */
  maintenanceWindow: 'MaintenanceWindow',
  /** Ours: the status lists fewer nodes than it covers, to stay under etcd's size limit (reason ObjectSizeLimit). */
  statusTrimmed: 'StatusTrimmed',
  /** Ours: a package's image is not signed by a key its PackageTrustPolicy trusts (Enforce): nothing of the SCR starts. */
  packageTrustRefused: 'PackageTrustRefused',
} as const;

export const legacyConditionType = (type: string): string => `${PREFIX}/${type}`;

/** Labels and annotations on the operator's children (ConfigMaps, NodeOps, Jobs, pods). */
export const CHILD_LABELS = {
  /** The owning SCR's name. */
  name: `${PREFIX}/name`,
  /** `<pkg>-<version>`. */
  package: `${PREFIX}/package`,
  stage: `${PREFIX}/stage`,
  node: `${PREFIX}/node`,
  /** `"True"` on interrupt pods/Jobs. */
  interrupt: `${PREFIX}/interrupt`,
  /** On per-node metadata ConfigMaps: the owning SCR's name. */
  nodeMeta: `${PREFIX}/skyhook-node-meta`,
} as const;

/**
 * Where a Skyhook stage pod sees its ConfigMaps, as upstream's stage pods mount them: the package's
 * configMap, and the node's metadata (labels.json, annotations.json, packages.json; the package's
 * init container copies /skyhook-package/* onto the host, so packages find it under
 * `${SKYHOOK_DIR}/node-metadata/`).
 */
export const STAGE_MOUNTS = {
  packageConfigMap: '/skyhook-package/configmaps',
  nodeMetadata: '/skyhook-package/node-metadata',
} as const;

export const CHILD_ANNOTATIONS = {
  name: `${PREFIX}/name`,
  /** JSON `{"name","version","skyhook","stage","image"[,"containerSHA"]}` describing the stage. */
  package: `${PREFIX}/package`,
  packageName: `${PREFIX}/Package.Name`,
  packageVersion: `${PREFIX}/Package.Version`,
  nodeName: `${PREFIX}/Node.name`,
} as const;

/** Bookkeeping the Skyhook controller keeps on its stage NodeOps (so a restart loses none of it). */
export const STAGE_OP_ANNOTATIONS = {
  /** The package entry's restart count when the op was created; the op's failures add to it. */
  previousRestarts: `${PREFIX}/previous-restarts`,
  /** Hash of the package fields the op was built from; a different hash makes a running op stale. */
  specHash: `${PREFIX}/spec-hash`,
  /**
   * `"true"` while the SCR is paused. The NodeOp controller honours it on any NodeOp: it starts no
   * cordon or drain, creates the Job with `spec.suspend: true` and suspends a Job that exists (its
   * running pod stops); removing it resumes the Job.
   */
  suspended: `${PREFIX}/suspended`,
} as const;

/** The implicit compartment holding nodes that match no DeploymentPolicy compartment. */
export const DEFAULT_COMPARTMENT = '__default__';

/** NodeOp bookkeeping (our kind, so our names; shaped after Kairos's `kairos.io/*` ones). */
export const NODEOP_NAMES = {
  /** Node annotation `<namespace>/<name>@<uid>` of the NodeOp that cordoned the node and may uncordon it. */
  cordonedBy: `${PREFIX}/cordoned-by`,
  /**
   * Node annotation `<namespace>/<name>@<uid>` of a NodeOp that reboots the node without cordoning it:
   * a reboot is a disruption, so the node counts against the DisruptionBudgets until the NodeOp is done.
   */
  rebootingBy: `${PREFIX}/rebooting-by`,
  /** Label on Jobs and reboot pods: the owning NodeOp's name. */
  nodeOpLabel: `${PREFIX}/nodeop`,
  /** Label on reboot pods. */
  rebootLabel: `${PREFIX}/reboot`,
  finalizer: `${PREFIX}/nodeop`,
  /** Reboot pod annotation: JSON `{"commands": string[][], "rebootsNode": boolean}`, what it will run on the host. */
  interruptAnnotation: `${PREFIX}/interrupt`,
  /** Reboot pod annotation: the name of the Job whose sentinel it waits for. */
  jobAnnotation: `${PREFIX}/job`,
  /** Host directory where a Job's main container leaves the sentinel `<jobName>` for the reboot pod. */
  sentinelHostDir: '/var/lib/skyhook/nodeop-sentinels',
  /**
   * `spec.managedBy` of the Jobs whose pods and status the NodeOp controller keeps itself instead of
   * Kubernetes' Job controller (jobs/job-runner/).
   */
  jobManager: `${PREFIX}/nodeop-controller`,
} as const;

/** NodeOp status condition types. */
export const NODEOP_CONDITIONS = {
  /** stopOnFailure holds back the nodes not started yet; the message names the failed node. */
  stoppedOnFailure: 'StoppedOnFailure',
  /** No node matches the NodeOp (yet). */
  noMatchingNodes: 'NoMatchingNodes',
  /** The operator does not run NodeOps of this namespace (NODEOP_NAMESPACES): the message says how to fix it. */
  ignored: 'Ignored',
} as const;

/** NodeOp Event reasons (on the NodeOp and on the node). */
export const NODEOP_EVENT_REASONS = {
  cordoned: 'Cordoned',
  uncordoned: 'Uncordoned',
  drained: 'Drained',
  drainFailed: 'DrainFailed',
  jobCreated: 'JobCreated',
  jobDeleted: 'JobDeleted',
  nodeCompleted: 'NodeCompleted',
  nodeFailed: 'NodeFailed',
  rebootRequested: 'RebootRequested',
  rebootCompleted: 'RebootCompleted',
  stopped: 'StoppedOnFailure',
  namespaceNotWatched: 'NamespaceNotWatched',
} as const;

/** Kubernetes' own names the NodeOp machinery reads or writes. */
export const KUBERNETES_NAMES = {
  /** Node labels that mark control-plane nodes (presence counts, any value). */
  controlPlaneLabels: ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'],
  /** Taint key of a cordoned node. */
  unschedulableTaint: 'node.kubernetes.io/unschedulable',
  /** Annotation of mirror (static) pods; they cannot be evicted. */
  mirrorPodAnnotation: 'kubernetes.io/config.mirror',
  /** Label the Job controller puts on a Job's pods. */
  jobNameLabel: 'batch.kubernetes.io/job-name',
  /** `spec.managedBy` of a Job that Kubernetes' own Job controller runs (also when the field is unset). */
  builtInJobManager: 'kubernetes.io/job-controller',
} as const;

/** Names the sandbox (src/sandbox/) puts on its nodes. */
export const SANDBOX_NAMES = {
  /** Node label: `real` (kubelet + containerd in namespaces) or `simulated` (KWOK). */
  nodeKindLabel: 'sandbox.skyhook-ts.io/node-kind',
  /** KWOK manages exactly the nodes with this annotation set to `fake`. */
  simulatedNodeAnnotation: 'kwok.x-k8s.io/node',
} as const;
