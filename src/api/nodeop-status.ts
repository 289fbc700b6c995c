/** A NodeOp's status: its phase, one entry per node (phase, Job, reboot) and its conditions. */
import { Type, type Static } from 'typebox';
import { ConditionList } from './k8s-schemas.js';
import { PerNodeMap, StringEnum } from './schema-helpers.js';

const d = (description: string) => ({ description });

export const NODEOP_PHASES = ['Pending', 'Running', 'Completed', 'Failed'] as const;
export type NodeOpPhase = (typeof NODEOP_PHASES)[number];

export const NODE_PHASES = ['Preflight', 'Pending', 'Running', 'Completed', 'Failed'] as const;

export const REBOOT_STATUSES = ['not-requested', 'pending', 'completed', 'cancelled'] as const;

export const NodeOpNodeStatus = Type.Object({
  phase: StringEnum(NODE_PHASES, d('Where the node is.')),
  jobName: Type.Optional(Type.String(d("The node's Job."))),
  message: Type.Optional(Type.String(d('What happened last, for people.'))),
  rebootStatus: Type.Optional(StringEnum(REBOOT_STATUSES, d('The reboot after the Job.'))),
  restarts: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, ...d('Failed pods so far.') })),
  startedAt: Type.Optional(
    Type.String({ format: 'date-time', description: 'When the node was started; the drain timeout counts from here.' }),
  ),
  bootID: Type.Optional(
    Type.String({
      maxLength: 128,
      description: "The node's bootID when it was started; a reboot is done once it differs.",
    }),
  ),
  lastUpdated: Type.Optional(Type.String({ format: 'date-time', ...d('When this entry last changed.') })),
});
export type NodeOpNodeStatus = Static<typeof NodeOpNodeStatus>;

export const NodeOpStatus = Type.Object({
  phase: Type.Optional(StringEnum(NODEOP_PHASES, d('Phase of the whole NodeOp.'))),
  nodeStatuses: Type.Optional(PerNodeMap(NodeOpNodeStatus, { description: 'Per node name.' })),
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64', minimum: 0, ...d('Generation last seen.') })),
  conditions: Type.Optional(ConditionList),
  lastUpdated: Type.Optional(Type.String({ format: 'date-time', ...d('When the status last changed.') })),
});
export type NodeOpStatus = Static<typeof NodeOpStatus>;
