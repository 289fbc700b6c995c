/**
 * NodeOp: one operation run on a set of nodes as one Job per node (our kind, namespaced). It has the
 * fields of the Kairos operator's NodeOp, so it is useful on its own for ad-hoc node work, plus generic
 * fields the Skyhook controller sets when it makes a NodeOp the child of one package stage on one
 * node (init steps, ConfigMap mounts, host network, drain exemptions, event verbosity, interrupt,
 * child labels, tolerations). `skyhookStage` only records which stage a NodeOp stands for (printer
 * columns, metrics, the Skyhook controller's lookups): the NodeOp controller's behaviour depends on
 * the generic fields alone. The status is in nodeop-status.ts (re-exported here).
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Type, type Static } from 'typebox';
import { EnvList, LabelSelector, OBJECT_NAME_PATTERN, PullSecretList, Toleration } from './k8s-schemas.js';
import { type GROUP_VERSION, KINDS } from './names.js';
import type { ResourceDefinition } from './resource-definition.js';
import { NodeOpStatus } from './nodeop-status.js';
import { celRules, Duration, StringEnum, StringMap } from './schema-helpers.js';
import {
  Interrupt,
  Package,
  PACKAGE_NAME_MAX_LENGTH,
  PACKAGE_NAME_PATTERN,
  PACKAGE_STAGES,
  PackageResources,
} from './skyhook.js';

export {
  NODE_PHASES,
  NODEOP_PHASES,
  NodeOpNodeStatus,
  type NodeOpPhase,
  NodeOpStatus,
  REBOOT_STATUSES,
} from './nodeop-status.js';

const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const StringList = (maxItems: number, description: string) => Type.Array(Type.String(), { maxItems, description });
const d = (description: string) => ({ description });

export const DrainOptions = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ default: false, ...d('Drain each node after cordoning it.') })),
    force: Type.Optional(Type.Boolean({ default: false, description: 'Also evict pods that no controller owns.' })),
    gracePeriodSeconds: Type.Optional(
      Type.Integer({ format: 'int32', minimum: 0, ...d("Evicted pods' grace; unset: their own.") }),
    ),
    ignoreDaemonSets: Type.Optional(Type.Boolean({ default: true, ...d('Leave DaemonSet pods running.') })),
    deleteEmptyDirData: Type.Optional(
      Type.Boolean({ default: false, description: 'Also evict pods with emptyDir volumes.' }),
    ),
    timeoutSeconds: Type.Optional(
      Type.Integer({ format: 'int32', minimum: 0, description: 'Drain deadline; unset or 0 = none.' }),
    ),
    disableEviction: Type.Optional(
      Type.Boolean({ default: false, description: 'Delete pods instead of evicting them (bypasses PDBs).' }),
    ),
    exemptNamespaces: Type.Optional(
      Type.Array(Type.String({ maxLength: 63, pattern: DNS_LABEL_PATTERN }), {
        maxItems: 64,
        'x-kubernetes-list-type': 'set',
        description: 'Pods in these namespaces are left alone by the drain (e.g. kube-system).',
      }),
    ),
    exemptCordonTolerating: Type.Optional(
      Type.Boolean({
        description:
          'Leave alone pods that tolerate the node.kubernetes.io/unschedulable:NoSchedule taint (they are meant to run on cordoned nodes). Unset = false, as kubectl drain.',
      }),
    ),
  },
  d('How each node is drained after its cordon (needs cordon: true).'),
);
export type DrainOptions = Static<typeof DrainOptions>;

export const Preflight = Type.Object(
  {
    command: Type.Array(Type.String(), { minItems: 1, maxItems: 256, ...d('Check run on the node; exit 0: go on.') }),
    image: Type.Optional(Type.String({ maxLength: 512, ...d('Image of the check; defaults to spec.image.') })),
    activeDeadlineSeconds: Type.Optional(
      Type.Integer({ format: 'int32', minimum: 1, default: 120, ...d('Deadline of the check.') }),
    ),
  },
  d('Refused by the API server (nothing runs it): put the check first in initSteps.'),
);
const PREFLIGHT_REFUSED = 'preflight is not run by the operator: put the check first in initSteps';
const GRACE = "Grace period of each node's Job pods and reboot pod; unset = Kubernetes' 30 s (the reboot pod's 5 s).";

/** One init container of the node's Job; steps run in order and each must succeed. */
export const InitStep = Type.Object({
  name: Type.String({ maxLength: 63, pattern: DNS_LABEL_PATTERN, ...d('Init container name.') }),
  image: Type.Optional(Type.String({ maxLength: 512, description: 'Defaults to spec.image.' })),
  command: Type.Optional(StringList(256, 'Command of the step.')),
  args: Type.Optional(StringList(256, 'Arguments of the command.')),
  env: Type.Optional({ ...EnvList, ...d('Environment of the step.') }),
  resources: Type.Optional(PackageResources),
});
export type InitStep = Static<typeof InitStep>;

/**
 * The package stage a NodeOp performs for a Skyhook; set only on the Skyhook controller's children.
 * A back-reference (columns, metrics, the Skyhook controller's lookups): the NodeOp controller acts
 * on the generic fields the Skyhook controller sets beside it, never on this.
 */
export const SkyhookStage = Type.Object(
  {
    skyhook: Type.String({ maxLength: 253, pattern: OBJECT_NAME_PATTERN, ...d('The Skyhook.') }),
    package: Type.Object(
      {
        name: Type.String({ maxLength: PACKAGE_NAME_MAX_LENGTH, pattern: PACKAGE_NAME_PATTERN, ...d('Package name.') }),
        version: Package.properties.version,
        image: Package.properties.image,
        containerSHA: Type.Optional(Type.String(d('Image digest, when pinned.'))),
      },
      d('The package.'),
    ),
    stage: StringEnum(PACKAGE_STAGES, d('The stage.')),
    // skyhook-ts 0.1.0 wrote these three here; a NodeOp it created may still be in flight after an
    // upgrade, so they stay readable (templates/legacy-stage-fields.ts turns them into the generic fields).
    interrupt: Type.Optional(
      Type.Object(Interrupt.properties, {
        description: 'Deprecated: written by skyhook-ts 0.1.0; now spec.interrupt.',
      }),
    ),
    configMap: Type.Optional(
      Type.String({
        maxLength: 253,
        description: 'Deprecated: written by skyhook-ts 0.1.0; now spec.configMapMounts.',
      }),
    ),
    nodeMetadataConfigMap: Type.Optional(
      Type.String({
        maxLength: 253,
        description: 'Deprecated: written by skyhook-ts 0.1.0; now spec.configMapMounts.',
      }),
    ),
  },
  d('Set by the operator on stage NodeOps: which Skyhook, package and stage this is.'),
);
export type SkyhookStage = Static<typeof SkyhookStage>;

/** Volume names the Job itself uses; a ConfigMap mount may not take them. */
export const RESERVED_VOLUME_NAMES = ['host-root', 'sentinel'] as const;

/** A ConfigMap mounted read-only into every container of the node's Job that runs on the host. */
export const ConfigMapMount = Type.Object({
  name: Type.String({ maxLength: 63, pattern: DNS_LABEL_PATTERN, description: "The volume's name in the Job." }),
  configMap: Type.String({
    maxLength: 253,
    pattern: OBJECT_NAME_PATTERN,
    description: "The ConfigMap's name, in the NodeOp's namespace.",
  }),
  mountPath: Type.String({ maxLength: 256, pattern: '^/', ...d('Where the ConfigMap is mounted.') }),
});
export type ConfigMapMount = Static<typeof ConfigMapMount>;

export const EVENT_VERBOSITIES = ['All', 'Quiet'] as const;
export type EventVerbosity = (typeof EVENT_VERBOSITIES)[number];

export const NodeOpSpec = Type.Object(
  {
    nodeSelector: Type.Optional(LabelSelector('Nodes to run on; unset (and no targetNodes) = all nodes.')),
    targetNodes: Type.Optional(
      Type.Array(Type.String({ maxLength: 253, pattern: OBJECT_NAME_PATTERN }), {
        minItems: 1,
        maxItems: 1000,
        'x-kubernetes-list-type': 'set',
        description: 'Names of the nodes to run on (instead of nodeSelector).',
      }),
    ),
    image: Type.Optional(
      Type.String({ maxLength: 512, description: 'Image of the Job; defaults to the operator setting.' }),
    ),
    command: Type.Array(Type.String(), {
      minItems: 1,
      maxItems: 256,
      description: 'Command of the main container (no shell added).',
    }),
    initSteps: Type.Optional(
      Type.Array(InitStep, {
        maxItems: 16,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        ...d('Init containers run in order before command.'),
      }),
    ),
    env: Type.Optional({ ...EnvList, ...d('Environment of the main container.') }),
    /** Requests and limits of the main container (init steps set their own). */
    resources: Type.Optional(PackageResources),
    hostMountPath: Type.Optional(
      Type.String({ default: '/host', maxLength: 256, pattern: '^/', description: "Where the host's / is mounted." }),
    ),
    imagePullSecrets: Type.Optional(
      PullSecretList("Pull secrets of the Job's pods: Secrets in the NodeOp's namespace, each named once."),
    ),
    tolerations: Type.Optional(Type.Array(Toleration, { maxItems: 64, ...d('Tolerations of the Job pods.') })),
    cordon: Type.Optional(
      Type.Boolean({ default: false, description: 'Cordon each node before its Job; uncordon after success.' }),
    ),
    uncordonOnFailure: Type.Optional(Type.Boolean({ default: false, ...d('Uncordon a node whose Job failed.') })),
    drainOptions: Type.Optional(DrainOptions),
    rebootOnSuccess: Type.Optional(Type.Boolean({ default: false, ...d('Reboot each node after its Job succeeded.') })),
    terminationGracePeriodSeconds: Type.Optional(Type.Integer({ format: 'int64', minimum: 0, description: GRACE })),
    backoffLimit: Type.Optional(
      Type.Integer({ format: 'int32', minimum: 0, description: 'Job backoffLimit; unset = 6.' }),
    ),
    concurrency: Type.Optional(
      Type.Integer({ format: 'int32', minimum: 0, default: 0, description: 'Nodes at a time; 0 = all.' }),
    ),
    stopOnFailure: Type.Optional(
      Type.Boolean({ default: false, description: 'Start no more nodes once one has failed.' }),
    ),
    stageTimeout: Type.Optional(Duration({ description: 'Deadline of one attempt; unset or 0 = none.' })),
    preflight: Type.Optional(Preflight),
    interrupt: Type.Optional(
      Type.Object(Interrupt.properties, {
        description:
          "Run this interrupt on the host after each node's Job has succeeded (reboot, service restarts, …); takes precedence over rebootOnSuccess.",
      }),
    ),
    configMapMounts: Type.Optional(
      Type.Array(ConfigMapMount, {
        maxItems: 16,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        description: 'ConfigMaps mounted read-only into the init steps and the main container, in order.',
        ...celRules({
          rule: `self.all(m, !(m.name in [${RESERVED_VOLUME_NAMES.map((n) => `'${n}'`).join(', ')}]))`,
          message: `configMapMounts may not use the volume names ${RESERVED_VOLUME_NAMES.join(', ')}`,
        }),
      }),
    ),
    hostNetwork: Type.Optional(
      Type.Boolean({
        description:
          "Run the Job's pods in the host's network namespace (dnsPolicy ClusterFirstWithHostNet). Unset = false.",
      }),
    ),
    eventVerbosity: Type.Optional(
      StringEnum(EVENT_VERBOSITIES, {
        description:
          "All (unset): an Event for every step. Quiet: none for routine progress (Job created, node completed), for a creator that records those itself, and a node's routine Running entry in the status only once its Job has run 10 s (a shorter Job goes straight to Completed or Failed); cordon, drain, interrupt and failure Events, and restarts, stuck pods and failures in the status, are always recorded.",
      }),
    ),
    childLabels: Type.Optional(
      StringMap(Type.String({ maxLength: 63 }), {
        maxProperties: 16,
        description:
          "Labels added to each node's Job, its pods and the reboot pod, besides the NodeOp and node labels (which win).",
      }),
    ),
    skyhookStage: Type.Optional(SkyhookStage),
  },
  celRules(
    {
      rule: '!(has(self.nodeSelector) && has(self.targetNodes))',
      message: 'targetNodes and nodeSelector are mutually exclusive',
      fieldPath: '.targetNodes',
    },
    { rule: '!has(self.preflight)', message: PREFLIGHT_REFUSED, fieldPath: '.preflight' },
    {
      rule: '!has(self.drainOptions) || !self.drainOptions.enabled || self.cordon',
      message: 'drainOptions.enabled requires cordon: true',
      fieldPath: '.drainOptions',
    },
    {
      rule: '!has(self.skyhookStage) || (has(self.targetNodes) && size(self.targetNodes) == 1)',
      message: 'skyhookStage requires targetNodes with exactly one node',
      fieldPath: '.targetNodes',
    },
    {
      rule: "!has(self.skyhookStage) || (self.skyhookStage.stage in ['interrupt', 'uninstall-interrupt']) == (has(self.interrupt) || has(self.skyhookStage.interrupt))",
      message: 'interrupt is required for the interrupt stages (skyhookStage.stage) and forbidden for the others',
      fieldPath: '.interrupt',
    },
  ),
);
export type NodeOpSpec = Static<typeof NodeOpSpec>;

export const NODEOP_PRINTER_COLUMNS = [
  { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  { name: 'Skyhook', type: 'string', jsonPath: '.spec.skyhookStage.skyhook' },
  { name: 'Package', type: 'string', jsonPath: '.spec.skyhookStage.package.name' },
  { name: 'Version', type: 'string', jsonPath: '.spec.skyhookStage.package.version' },
  { name: 'Stage', type: 'string', jsonPath: '.spec.skyhookStage.stage' },
  { name: 'Nodes', type: 'string', jsonPath: '.spec.targetNodes', priority: 1 },
  { name: 'Image', type: 'string', jsonPath: '.spec.image', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
] as const;

export const NODEOP_DEFINITION: ResourceDefinition = {
  names: KINDS.nodeOp,
  scope: 'Namespaced',
  description: 'NodeOp: an operation run on nodes as one Job per node, with optional cordon, drain and reboot.',
  spec: NodeOpSpec,
  status: NodeOpStatus,
  printerColumns: NODEOP_PRINTER_COLUMNS,
};

export interface NodeOp {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof KINDS.nodeOp.kind;
  metadata: V1ObjectMeta;
  spec: NodeOpSpec;
  status?: NodeOpStatus;
}
