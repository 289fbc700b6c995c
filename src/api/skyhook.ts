/**
 * The Skyhook custom resource (SCR), field for field the upstream `skyhook.nvidia.com/v1alpha1` API
 * with its defaults, plus the fields newer upstream added (sequencing, drainConfig, per-package
 * stageTimeout, runtimeRequiredCordonAfter). Upstream's admission webhook rules are CEL rules here,
 * so the API server itself refuses bad SCRs with a message naming the field.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Type, type Static } from 'typebox';
import { ConditionList, EnvList, LabelSelector, Toleration } from './k8s-schemas.js';
import { type GROUP_VERSION, KINDS } from './names.js';
import { PACKAGE_VERSION_MAX_LENGTH, PACKAGE_VERSION_PATTERN } from './package-version.js';
import type { ResourceDefinition } from './resource-definition.js';
import {
  type CelRule,
  celRules,
  Duration,
  Nullable,
  PositiveQuantity,
  StringEnum,
  StringMap,
} from './schema-helpers.js';

export const INTERRUPT_TYPES = ['service', 'reboot', 'noop', 'restartAllServices'] as const;
export type InterruptType = (typeof INTERRUPT_TYPES)[number];

export const SKYHOOK_STATUSES = [
  'unknown',
  'complete',
  'blocked',
  'waiting',
  'disabled',
  'paused',
  'in_progress',
  'erroring',
] as const;
export type SkyhookStatusValue = (typeof SKYHOOK_STATUSES)[number];

export const PACKAGE_STATES = ['complete', 'in_progress', 'skipped', 'erroring', 'unknown'] as const;
export type PackageState = (typeof PACKAGE_STATES)[number];

/** `uninstall-interrupt` is newer upstream's; listed so node state written by it still validates. */
export const PACKAGE_STAGES = [
  'apply',
  'interrupt',
  'post-interrupt',
  'config',
  'uninstall',
  'uninstall-interrupt',
  'upgrade',
] as const;
export type PackageStage = (typeof PACKAGE_STAGES)[number];

export const SEQUENCING_MODES = ['node', 'all'] as const;

export const PACKAGE_NAME_PATTERN = '^[a-z][-a-z0-9]{0,41}[a-z]$';
export const PACKAGE_NAME_MAX_LENGTH = 43;

/** Bounds that keep the CEL rules below within the API server's cost budget. */
const MAX_PACKAGES = 64;
const MAX_MAP_ENTRIES = 64;

export const Interrupt = Type.Object({
  type: StringEnum(INTERRUPT_TYPES),
  services: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 64 })),
});
export type Interrupt = Static<typeof Interrupt>;

/**
 * Package resources: all four or none (a CEL rule), each above zero (by pattern). That each limit is
 * at least its request is checked by the controller, which reports an InvalidSpec condition: a CEL
 * rule parsing two int-or-string quantities per package exceeds the API server's cost budget. Tried
 * on Kubernetes 1.33 with `quantity(string(self.cpuLimit)).compareTo(quantity(string(self.cpuRequest))) >= 0`
 * (and isGreaterThan, and an isQuantity guard): "estimated rule cost exceeds budget by factor of
 * 8.1x", the same with maxLength 64 or 32 on the fields, since the estimator does not bound an
 * int-or-string's `string()` by maxLength (docs/bad-input.md).
 */
export const PackageResources = Type.Object(
  {
    cpuRequest: Type.Optional(PositiveQuantity()),
    cpuLimit: Type.Optional(PositiveQuantity()),
    memoryRequest: Type.Optional(PositiveQuantity()),
    memoryLimit: Type.Optional(PositiveQuantity()),
  },
  celRules({
    rule: 'has(self.cpuRequest) == has(self.cpuLimit) && has(self.cpuRequest) == has(self.memoryRequest) && has(self.cpuRequest) == has(self.memoryLimit)',
    message: 'resources: set all of cpuRequest, cpuLimit, memoryRequest and memoryLimit, or none of them',
  }),
);

/** The last path segment of the image (after the last `/`), so a registry port is not taken for a tag. */
const IMAGE_LAST_SEGMENT = "self.image.substring(self.image.lastIndexOf('/') + 1)";

export const Package = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        maxLength: PACKAGE_NAME_MAX_LENGTH,
        pattern: PACKAGE_NAME_PATTERN,
        description: 'Filled from the map key; if set it must equal the key.',
      }),
    ),
    version: Type.String({
      maxLength: PACKAGE_VERSION_MAX_LENGTH,
      pattern: PACKAGE_VERSION_PATTERN,
      description: 'Semantic version; also the image tag.',
    }),
    image: Type.String({
      minLength: 1,
      maxLength: 512,
      pattern: '^\\S+$',
      description: 'Package image without tag: the version is the tag.',
    }),
    containerSHA: Type.Optional(
      Type.String({
        pattern: '^sha256:[0-9a-f]{64}$',
        description: 'If set the image is pulled by this digest instead of by the version tag.',
      }),
    ),
    agentImageOverride: Type.Optional(
      Type.String({ maxLength: 512, description: 'Agent image (with tag) for this package only.' }),
    ),
    interrupt: Type.Optional(Interrupt),
    dependsOn: Type.Optional(
      StringMap(Type.String({ minLength: 1, maxLength: PACKAGE_VERSION_MAX_LENGTH }), {
        maxProperties: MAX_MAP_ENTRIES,
        description: 'Packages of this Skyhook (name → exact version) that must complete first.',
      }),
    ),
    configInterrupts: Type.Optional(
      StringMap(Interrupt, {
        maxProperties: MAX_MAP_ENTRIES,
        description: 'Interrupt to run when a configMap key (or a glob of keys, `*` only) changes.',
      }),
    ),
    configMap: Type.Optional(
      StringMap(Type.String(), { description: 'Files given to the package under /skyhook-package/configmaps.' }),
    ),
    env: Type.Optional(EnvList),
    resources: Type.Optional(PackageResources),
    gracefulShutdown: Type.Optional(Duration({ description: "The package pods' termination grace period." })),
    stageTimeout: Type.Optional(
      Duration({ description: 'Deadline of one attempt of a stage (of the whole stage for interrupts); 0 = none.' }),
    ),
  },
  celRules(
    {
      rule: "!has(self.configInterrupts) || self.configInterrupts.all(k, k.contains('*') || (has(self.configMap) && k in self.configMap))",
      message: 'configInterrupts: every key without `*` must be a key of configMap',
      fieldPath: '.configInterrupts',
    },
    {
      rule: "!self.image.contains('@')",
      message: 'image must not embed a digest; pin the image with containerSHA instead',
      fieldPath: '.image',
    },
    {
      rule: `!${IMAGE_LAST_SEGMENT}.contains(':') || ${IMAGE_LAST_SEGMENT}.substring(${IMAGE_LAST_SEGMENT}.indexOf(':') + 1) == self.version`,
      message: 'image has a tag that differs from version; leave the tag out, the version is the tag',
      fieldPath: '.image',
    },
  ),
);
export type Package = Static<typeof Package>;

const InterruptionBudget = Type.Object(
  {
    percent: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 100 }))),
    count: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  },
  celRules({
    rule: '!has(self.percent) || !has(self.count)',
    message: 'interruptionBudget: percent and count are mutually exclusive',
  }),
);

const DrainConfig = Type.Object({
  disableEviction: Type.Optional(
    Nullable(Type.Boolean({ default: false, description: 'Delete pods instead of evicting them (bypasses PDBs).' })),
  ),
  deleteEmptyDirData: Type.Optional(
    Nullable(Type.Boolean({ default: true, description: 'false: pods with emptyDir volumes block the drain.' })),
  ),
  force: Type.Optional(
    Nullable(Type.Boolean({ default: true, description: 'false: pods without a controller block the drain.' })),
  ),
  ignoreDaemonSets: Type.Optional(
    Nullable(Type.Boolean({ default: true, description: 'Leave DaemonSet pods running.' })),
  ),
  timeout: Type.Optional(Nullable(Duration({ description: 'Drain deadline, from drain start; unset or 0 = none.' }))),
  gracePeriod: Type.Optional(
    Nullable(Duration({ description: "Grace period for evicted pods; unset = the pod's own." })),
  ),
});

/**
 * A rule every package must pass that needs the whole packages map (its keys, or other packages).
 * The message cannot name the failing package: a messageExpression listing map keys is far over the
 * API server's message cost budget, because map keys have no length bound.
 */
function packagesRule(condition: string, problem: string): CelRule {
  return {
    rule: `!has(self.packages) || self.packages.all(k, ${condition})`,
    message: `packages: ${problem}`,
    fieldPath: '.packages',
  };
}

export const SkyhookSpec = Type.Object(
  {
    serial: Type.Optional(Type.Boolean({ default: false, description: 'Start one package per node per pass.' })),
    pause: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Ignored (kept for old manifests); use the skyhook.nvidia.com/pause annotation.',
      }),
    ),
    podNonInterruptLabels: Type.Optional(
      LabelSelector('Pods matching this selector on a node hold back its interrupts.'),
    ),
    nodeSelectors: Type.Optional(LabelSelector('Nodes this Skyhook targets; empty selects all nodes.')),
    deploymentPolicy: Type.Optional(
      Type.String({ maxLength: 253, description: 'Name of a DeploymentPolicy; excludes interruptionBudget.' }),
    ),
    deploymentPolicyOptions: Type.Optional(
      Type.Object({ resetBatchStateOnCompletion: Type.Optional(Type.Boolean({ default: true })) }),
    ),
    interruptionBudget: Type.Optional(InterruptionBudget),
    packages: Type.Optional(StringMap(Package, { maxProperties: MAX_PACKAGES, description: 'Packages by name.' })),
    additionalTolerations: Type.Optional(Type.Array(Toleration, { maxItems: 64 })),
    runtimeRequired: Type.Optional(
      Type.Boolean({ default: false, description: 'Nodes stay tainted until this Skyhook completes on them.' }),
    ),
    autoTaintNewNodes: Type.Optional(
      Type.Boolean({ default: false, description: 'Taint new nodes (with runtimeRequired).' }),
    ),
    runtimeRequiredCordonAfter: Type.Optional(
      Type.Boolean({ default: false, description: 'Cordon a node when its runtime-required taint is removed.' }),
    ),
    priority: Type.Optional(Type.Integer({ default: 200, minimum: 1, description: 'Lower runs first; ties by name.' })),
    sequencing: Type.Optional(
      StringEnum(SEQUENCING_MODES, {
        default: 'node',
        description: 'all: every node completes this Skyhook before later ones start.',
      }),
    ),
    drainConfig: Type.Optional(DrainConfig),
  },
  celRules(
    {
      rule: "!has(self.deploymentPolicy) || self.deploymentPolicy == '' || !has(self.interruptionBudget) || (!has(self.interruptionBudget.percent) && !has(self.interruptionBudget.count))",
      message: 'deploymentPolicy and interruptionBudget are mutually exclusive',
      fieldPath: '.deploymentPolicy',
    },
    packagesRule(
      `k.matches('${PACKAGE_NAME_PATTERN}')`,
      `every package name (map key) must match ${PACKAGE_NAME_PATTERN}`,
    ),
    packagesRule(
      '!has(self.packages[k].name) || self.packages[k].name == k',
      'a package name, when set, must equal its map key',
    ),
    packagesRule(
      '!has(self.packages[k].dependsOn) || self.packages[k].dependsOn.all(d, d in self.packages && self.packages[d].version == self.packages[k].dependsOn[d])',
      'dependsOn must name packages of this Skyhook at their exact version',
    ),
  ),
);
export type SkyhookSpec = Static<typeof SkyhookSpec>;

export const PackageStatus = Type.Object({
  name: Type.String(),
  version: Type.String(),
  image: Type.String(),
  containerSHA: Type.Optional(Type.String()),
  stage: StringEnum(PACKAGE_STAGES),
  state: StringEnum(PACKAGE_STATES),
  restarts: Type.Optional(Type.Integer({ format: 'int32' })),
});
export type PackageStatus = Static<typeof PackageStatus>;

const BatchState = Type.Object({
  currentBatch: Type.Optional(Type.Integer()),
  consecutiveFailures: Type.Optional(Type.Integer()),
  completedNodes: Type.Optional(Type.Integer()),
  failedNodes: Type.Optional(Type.Integer()),
  shouldStop: Type.Optional(Type.Boolean()),
  lastBatchSize: Type.Optional(Type.Integer()),
  lastBatchFailed: Type.Optional(Type.Boolean()),
});

export const CompartmentStatus = Type.Object({
  matched: Type.Integer(),
  ceiling: Type.Integer(),
  inProgress: Type.Integer(),
  completed: Type.Integer(),
  progressPercent: Type.Integer(),
  batchState: Type.Optional(BatchState),
});
export type CompartmentStatus = Static<typeof CompartmentStatus>;

export const SkyhookStatus = Type.Object({
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64', minimum: 0 })),
  nodeState: Type.Optional(StringMap(StringMap(PackageStatus), { description: 'node → "<pkg>|<version>" → state' })),
  nodeStatus: Type.Optional(StringMap(StringEnum(SKYHOOK_STATUSES))),
  status: Type.Optional(StringEnum(SKYHOOK_STATUSES)),
  conditions: Type.Optional(ConditionList),
  nodeBootIds: Type.Optional(StringMap(Type.String())),
  nodePriority: Type.Optional(StringMap(Type.String({ format: 'date-time' }))),
  nodeOrderOffset: Type.Optional(Type.Integer()),
  configUpdates: Type.Optional(StringMap(Type.Array(Type.String()))),
  compartmentStatuses: Type.Optional(StringMap(CompartmentStatus)),
  nodesInProgress: Type.Optional(Type.Integer({ default: 0 })),
  completeNodes: Type.Optional(Type.String({ default: '0/0' })),
  packageList: Type.Optional(Type.String({ default: '' })),
});
export type SkyhookStatus = Static<typeof SkyhookStatus>;

/** kubectl columns, in upstream's order. */
export const SKYHOOK_PRINTER_COLUMNS = [
  { name: 'Status', type: 'string', jsonPath: '.status.status' },
  { name: 'Priority', type: 'integer', jsonPath: '.spec.priority' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'Nodes In-Progress', type: 'integer', jsonPath: '.status.nodesInProgress' },
  { name: 'Complete Nodes', type: 'string', jsonPath: '.status.completeNodes' },
  { name: 'Packages', type: 'string', jsonPath: '.status.packageList' },
  { name: 'Policy', type: 'string', jsonPath: '.spec.deploymentPolicy' },
] as const;

export const SKYHOOK_DEFINITION: ResourceDefinition = {
  names: KINDS.skyhook,
  scope: 'Cluster',
  description:
    'Skyhook (SCR): packages to apply to the host OS of the selected nodes, in stages, within an interruption budget.',
  spec: SkyhookSpec,
  status: SkyhookStatus,
  printerColumns: SKYHOOK_PRINTER_COLUMNS,
};

export interface Skyhook {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof KINDS.skyhook.kind;
  metadata: V1ObjectMeta;
  spec: SkyhookSpec;
  status?: SkyhookStatus;
}
