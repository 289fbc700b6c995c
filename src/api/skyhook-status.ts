/**
 * The Skyhook's status: per node and package the stage and state the planner read back from the
 * node (`nodeState`), per node a summary, per compartment the rollout's progress, and the columns
 * kubectl shows. Split from skyhook.ts so spec and status each fit in one sitting.
 */
import { Type, type Static } from 'typebox';
import { ConditionList } from './k8s-schemas.js';
import { PerNodeMap, StringEnum, StringMap } from './schema-helpers.js';

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

const d = (description: string) => ({ description });

export const PackageStatus = Type.Object({
  name: Type.String(d('Package name.')),
  version: Type.String(d('Package version.')),
  image: Type.String(d('Package image, without the tag.')),
  containerSHA: Type.Optional(Type.String(d('Image digest, when the package pins one.'))),
  stage: StringEnum(PACKAGE_STAGES, d('The stage the package is at on the node.')),
  state: StringEnum(PACKAGE_STATES, d("The stage's state on the node.")),
  restarts: Type.Optional(Type.Integer({ format: 'int32', ...d('Failed attempts so far.') })),
});
export type PackageStatus = Static<typeof PackageStatus>;

const BatchState = Type.Object(
  {
    currentBatch: Type.Optional(Type.Integer(d('Number of the batch in progress, from 1.'))),
    consecutiveFailures: Type.Optional(Type.Integer(d('Failed batches in a row.'))),
    completedNodes: Type.Optional(Type.Integer(d('Nodes completed in this compartment.'))),
    failedNodes: Type.Optional(Type.Integer(d('Nodes failed in this compartment.'))),
    shouldStop: Type.Optional(
      Type.Boolean(d("true: the strategy's failureThreshold was reached; no new batch starts.")),
    ),
    lastBatchSize: Type.Optional(Type.Integer(d('Nodes in the last batch.'))),
    lastBatchFailed: Type.Optional(Type.Boolean(d('Whether the last batch counted as failed.'))),
  },
  d("The strategy's batch bookkeeping (reset with kubectl skyhook deployment-policy reset)."),
);

export const CompartmentStatus = Type.Object(
  {
    matched: Type.Integer(d('Nodes of the Skyhook in this compartment.')),
    ceiling: Type.Integer(d('Nodes the budget lets be in progress at once.')),
    inProgress: Type.Integer(d('Nodes in progress now.')),
    completed: Type.Integer(d('Nodes complete.')),
    progressPercent: Type.Integer(d('completed / matched, in percent.')),
    batchState: Type.Optional(BatchState),
  },
  d('Rollout progress of one DeploymentPolicy compartment.'),
);
export type CompartmentStatus = Static<typeof CompartmentStatus>;

export const SkyhookStatus = Type.Object({
  observedGeneration: Type.Optional(
    Type.Integer({ format: 'int64', minimum: 0, ...d('metadata.generation the status was written for.') }),
  ),
  nodeState: Type.Optional(PerNodeMap(StringMap(PackageStatus), { description: 'node → "<pkg>|<version>" → state' })),
  nodeStatus: Type.Optional(PerNodeMap(StringEnum(SKYHOOK_STATUSES), d('node → status of this Skyhook there.'))),
  status: Type.Optional(StringEnum(SKYHOOK_STATUSES, d('Status of the whole Skyhook.'))),
  conditions: Type.Optional(ConditionList),
  nodeBootIds: Type.Optional(PerNodeMap(Type.String(), d('node → boot ID last seen (tells a reboot happened).'))),
  nodePriority: Type.Optional(
    PerNodeMap(Type.String({ format: 'date-time' }), d('node → when it was admitted: the rollout order.')),
  ),
  nodeOrderOffset: Type.Optional(Type.Integer(d('Upstream bookkeeping of the node order; kept for compatibility.'))),
  configUpdates: Type.Optional(
    StringMap(Type.Array(Type.String()), d('package → configMap keys changed and not yet applied by a config stage.')),
  ),
  compartmentStatuses: Type.Optional(
    StringMap(CompartmentStatus, d('compartment → progress, with a DeploymentPolicy (__default__ for the rest).')),
  ),
  nodesInProgress: Type.Optional(Type.Integer({ default: 0, ...d('Nodes in progress now (kubectl column).') })),
  completeNodes: Type.Optional(Type.String({ default: '0/0', ...d('"complete/selected" nodes (kubectl column).') })),
  packageList: Type.Optional(Type.String({ default: '', ...d('"name:version" of each package (kubectl column).') })),
  nextMaintenanceWindow: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'Ours: when the next maintenance window opens, while nodes wait for one to start an interrupt (absent otherwise).',
    }),
  ),
});
export type SkyhookStatus = Static<typeof SkyhookStatus>;
