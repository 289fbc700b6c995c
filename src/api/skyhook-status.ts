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
  nodeState: Type.Optional(PerNodeMap(StringMap(PackageStatus), { description: 'node → "<pkg>|<version>" → state' })),
  nodeStatus: Type.Optional(PerNodeMap(StringEnum(SKYHOOK_STATUSES))),
  status: Type.Optional(StringEnum(SKYHOOK_STATUSES)),
  conditions: Type.Optional(ConditionList),
  nodeBootIds: Type.Optional(PerNodeMap(Type.String())),
  nodePriority: Type.Optional(PerNodeMap(Type.String({ format: 'date-time' }))),
  nodeOrderOffset: Type.Optional(Type.Integer()),
  configUpdates: Type.Optional(StringMap(Type.Array(Type.String()))),
  compartmentStatuses: Type.Optional(StringMap(CompartmentStatus)),
  nodesInProgress: Type.Optional(Type.Integer({ default: 0 })),
  completeNodes: Type.Optional(Type.String({ default: '0/0' })),
  packageList: Type.Optional(Type.String({ default: '' })),
  nextMaintenanceWindow: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'Ours: when the next maintenance window opens, while nodes wait for one to start an interrupt (absent otherwise).',
    }),
  ),
});
export type SkyhookStatus = Static<typeof SkyhookStatus>;
