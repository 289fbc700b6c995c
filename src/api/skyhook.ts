/**
 * The Skyhook custom resource (SCR), field for field the upstream `skyhook.nvidia.com/v1alpha1` API
 * with its defaults, plus the fields newer upstream added (sequencing, drainConfig, per-package
 * stageTimeout, runtimeRequiredCordonAfter). Upstream's admission webhook rules are CEL rules here,
 * so the API server itself refuses bad SCRs with a message naming the field. This file holds the spec
 * and the resource definition; a package's schema is in skyhook-package.ts, the status in skyhook-status.ts.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Type, type Static } from 'typebox';
import { LabelSelector, Toleration } from './k8s-schemas.js';
import { type GROUP_VERSION, KINDS } from './names.js';
import type { ResourceDefinition } from './resource-definition.js';
import { type CelRule, celRules, Duration, Nullable, StringEnum, StringMap } from './schema-helpers.js';
import { PACKAGE_NAME_PATTERN, Package } from './skyhook-package.js';
import { SkyhookStatus } from './skyhook-status.js';

// The SCR's whole API stays importable from this one module, whichever file defines a part of it.
export {
  INTERRUPT_TYPES,
  Interrupt,
  type InterruptType,
  PACKAGE_NAME_MAX_LENGTH,
  PACKAGE_NAME_PATTERN,
  Package,
  PackageResources,
} from './skyhook-package.js';
export {
  CompartmentStatus,
  PACKAGE_STAGES,
  PACKAGE_STATES,
  type PackageStage,
  type PackageState,
  PackageStatus,
  SKYHOOK_STATUSES,
  SkyhookStatus,
  type SkyhookStatusValue,
} from './skyhook-status.js';

export const SEQUENCING_MODES = ['node', 'all'] as const;

/** Bounds that keep the CEL rules below within the API server's cost budget. */
const MAX_PACKAGES = 64;

const InterruptionBudget = Type.Object(
  {
    percent: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 0,
          maximum: 100,
          description: 'Percent of the selected nodes (rounded down, at least 1).',
        }),
      ),
    ),
    count: Type.Optional(Nullable(Type.Integer({ minimum: 0, description: 'Number of nodes.' }))),
  },
  {
    description: 'How many nodes may be interrupted (cordoned for an interrupt) at once; unset: all.',
    ...celRules({
      rule: '!has(self.percent) || !has(self.count)',
      message: 'interruptionBudget: percent and count are mutually exclusive',
    }),
  },
);

const DrainConfig = Type.Object(
  {
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
  },
  { description: 'How nodes are drained before an interrupt.' },
);

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
        description:
          'Only false is accepted (kept for old manifests, as upstream ignores it); pause with the skyhook.nvidia.com/pause annotation.',
        ...celRules({
          rule: '!self',
          message: 'spec.pause is not read; pause a Skyhook with the skyhook.nvidia.com/pause annotation',
        }),
      }),
    ),
    podNonInterruptLabels: Type.Optional(
      LabelSelector('Pods matching this selector on a node hold back its interrupts.'),
    ),
    podNonInterruptWarnAfter: Type.Optional(
      Duration({
        description:
          'Report-only: a node whose interrupt non-interruptible pods have held this long gets a Warning Event and the Blocked reason NonInterruptWaitLong; the pods are never interrupted. Unset or 0 = no warning.',
      }),
    ),
    nodeSelectors: Type.Optional(LabelSelector('Nodes this Skyhook targets; empty selects all nodes.')),
    deploymentPolicy: Type.Optional(
      Type.String({ maxLength: 253, description: 'Name of a DeploymentPolicy; excludes interruptionBudget.' }),
    ),
    deploymentPolicyOptions: Type.Optional(
      Type.Object(
        {
          resetBatchStateOnCompletion: Type.Optional(
            Type.Boolean({ default: true, description: 'Restart the batches at 1 when the rollout completes.' }),
          ),
        },
        { description: 'Options for the DeploymentPolicy rollout.' },
      ),
    ),
    interruptionBudget: Type.Optional(InterruptionBudget),
    packages: Type.Optional(StringMap(Package, { maxProperties: MAX_PACKAGES, description: 'Packages by name.' })),
    additionalTolerations: Type.Optional(
      Type.Array(Toleration, { maxItems: 64, description: "Tolerations added to the stage Jobs' pods." }),
    ),
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
