/**
 * MaintenancePolicy: node-initiated maintenance (#15) as one cluster-scoped kind. Kustodian's file
 * protocol and Kured's reboot-required protocol both ask for a slot; the operator grants at most
 * `maxConcurrent` slots among the policy's nodes, in arrival order, cordons and drains under the
 * policy's shared cordon claim (`maintenance_<policy>`), and releases the slot when the node's daemon
 * reports done. Cross-field rules are CEL rules, with messages that name the field.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Type, type Static } from 'typebox';
import { ConditionList, LabelSelector, OBJECT_NAME_PATTERN } from './k8s-schemas.js';
import { MaintenanceWindows } from './maintenance-window.js';
import { type GROUP_VERSION, KINDS } from './names.js';
import { DrainOptions } from './nodeop.js';
import type { ResourceDefinition } from './resource-definition.js';
import { celRules, Duration, StringEnum } from './schema-helpers.js';

/** Kustodian's and Kured's defaults, used when a path is not set. */
export const MAINTENANCE_DEFAULTS = {
  requiredPath: '/var/maintenance-required',
  inProgressPath: '/var/maintenance-in-progress',
  rebootSentinelPath: '/var/run/reboot-required',
} as const;

export const MAINTENANCE_PROTOCOLS = ['maintenance', 'reboot'] as const;
export type MaintenanceProtocol = (typeof MAINTENANCE_PROTOCOLS)[number];

const HostPath = (description: string) =>
  Type.String({ minLength: 2, maxLength: 1024, pattern: '^/[^\\x00]*[^/]$', description });

export const MaintenanceFileProtocol = Type.Object({
  enabled: Type.Optional(Type.Boolean({ default: true, description: 'Serve the Kustodian file protocol.' })),
  requiredPath: Type.Optional(
    HostPath(`Host file a script creates to ask for maintenance; default ${MAINTENANCE_DEFAULTS.requiredPath}.`),
  ),
  inProgressPath: Type.Optional(
    HostPath(
      `Host file the daemon creates once the node is cordoned and drained; default ${MAINTENANCE_DEFAULTS.inProgressPath}.`,
    ),
  ),
});
export type MaintenanceFileProtocol = Static<typeof MaintenanceFileProtocol>;

export const RebootProtocol = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({ default: true, description: 'Serve the Kured reboot protocol (off when `reboot` is absent).' }),
    ),
    sentinelPath: Type.Optional(
      HostPath(`Host file whose presence asks for a reboot; default ${MAINTENANCE_DEFAULTS.rebootSentinelPath}.`),
    ),
    sentinelCommand: Type.Optional(
      Type.Array(Type.String({ maxLength: 1024 }), {
        minItems: 1,
        maxItems: 64,
        description: 'Instead of sentinelPath: a command whose exit code 0 means a reboot is required (as kured).',
      }),
    ),
    rebootDelay: Type.Optional(Duration({ description: 'Wait this long after the drain before rebooting.' })),
  },
  celRules({
    rule: '!(has(self.sentinelPath) && has(self.sentinelCommand))',
    message: 'reboot: set at most one of sentinelPath or sentinelCommand',
  }),
);
export type RebootProtocol = Static<typeof RebootProtocol>;

/**
 * The NodeOp drain options with Kustodian's and Kured's defaults: both drain always, with force and
 * emptyDir data (kubectl drain's `--force --delete-emptydir-data --ignore-daemonsets`).
 */
export const MaintenanceDrainOptions = Type.Object(
  {
    ...DrainOptions.properties,
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'Drain the node before the slot is used.' })),
    force: Type.Optional(Type.Boolean({ default: true, description: 'Also evict pods that no controller owns.' })),
    deleteEmptyDirData: Type.Optional(
      Type.Boolean({ default: true, description: 'Also evict pods with emptyDir volumes.' }),
    ),
  },
  { default: {}, description: 'How the node is drained (kubectl drain --force --delete-emptydir-data by default).' },
);
export type MaintenanceDrainOptions = Static<typeof MaintenanceDrainOptions>;

/** Kured's alert blocker (--prometheus-url, --alert-filter-regexp, --alert-filter-match-only, --alert-firing-only). */
export const AlertGate = Type.Object(
  {
    prometheusUrl: Type.String({ maxLength: 2048, pattern: '^https?://', description: 'Prometheus base URL.' }),
    alertFilterRegexp: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: 'Alert names to ignore (or, with matchOnly, the only ones counted).',
      }),
    ),
    matchOnly: Type.Optional(
      Type.Boolean({ default: false, description: 'alertFilterRegexp names the only alerts counted.' }),
    ),
    firingOnly: Type.Optional(Type.Boolean({ default: false, description: 'Count only alerts that are firing.' })),
  },
  { description: 'Reboots wait while Prometheus has alerts that count (kured --prometheus-url).' },
);
export type AlertGate = Static<typeof AlertGate>;

export const MaintenancePolicySpec = Type.Object({
  nodeSelector: Type.Optional(LabelSelector('Nodes this policy serves; empty = all nodes.')),
  maxConcurrent: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 10_000, default: 1, description: 'Most nodes in maintenance at once.' }),
  ),
  protocols: Type.Optional(
    Type.Object(
      {
        maintenance: Type.Optional(
          Type.Object(MaintenanceFileProtocol.properties, {
            default: {},
            description: "Kustodian's protocol: a file asks for maintenance, a script does it.",
          }),
        ),
        reboot: Type.Optional({ ...RebootProtocol, description: "Kured's protocol: a file asks for a reboot." }),
      },
      { default: {}, description: 'Which node requests the daemon watches for.' },
    ),
  ),
  drainOptions: Type.Optional(MaintenanceDrainOptions),
  rebootWindows: Type.Optional(
    MaintenanceWindows(
      'When reboots may start (kured --reboot-days/--start-time/--end-time/--time-zone, or cron); absent or empty = any time. Kustodian maintenance is not held by them.',
    ),
  ),
  blockingPodSelectors: Type.Optional(
    Type.Array(
      LabelSelector('A pod on the node matching this selector holds its reboot (kured --blocking-pod-selector).'),
      {
        maxItems: 16,
        'x-kubernetes-list-type': 'atomic',
        description: 'Pods that hold a node reboot while any runs on the node.',
      },
    ),
  ),
  alertGate: Type.Optional(AlertGate),
  lockTTL: Type.Optional(
    Duration({
      description:
        'A slot holder whose daemon has not reported for this long loses its slot (its cordon is lifted); unset or 0 = never.',
    }),
  ),
});
export type MaintenancePolicySpec = Static<typeof MaintenancePolicySpec>;

export const HOLDER_PHASES = ['Cordoning', 'Draining', 'InProgress', 'Rebooting', 'Releasing'] as const;
export type HolderPhase = (typeof HOLDER_PHASES)[number];

const NodeName = Type.String({ maxLength: 253, pattern: OBJECT_NAME_PATTERN, description: 'The node.' });
const Time = (description: string) => Type.String({ format: 'date-time', description });
const Protocol = StringEnum(MAINTENANCE_PROTOCOLS, { description: 'maintenance (Kustodian) or reboot (Kured).' });
const Message = Type.Optional(Type.String({ maxLength: 2048, description: 'What the node waits for, for people.' }));

export const MaintenanceHolder = Type.Object({
  node: NodeName,
  protocol: Protocol,
  phase: StringEnum(HOLDER_PHASES, { description: 'Where the slot holder is.' }),
  requestedAt: Time('When the daemon asked.'),
  grantedAt: Time('When the slot was granted.'),
  message: Message,
});
export type MaintenanceHolder = Static<typeof MaintenanceHolder>;

export const QueuedRequest = Type.Object({
  node: NodeName,
  protocol: Protocol,
  requestedAt: Time('When the daemon asked.'),
  reason: Type.String({
    maxLength: 128,
    description:
      "Why it waits: MaxConcurrent, ClusterBudget, OutsideMaintenanceWindow, ProtocolDisabled, DrainFailed, or a reboot blocker's reason.",
  }),
  message: Message,
});
export type QueuedRequest = Static<typeof QueuedRequest>;

export const MaintenanceCompletion = Type.Object({
  node: NodeName,
  protocol: Protocol,
  requestedAt: Time('When the daemon asked.'),
  completedAt: Time('When the node was done.'),
});
export type MaintenanceCompletion = Static<typeof MaintenanceCompletion>;

export const MaintenancePolicyStatus = Type.Object({
  observedGeneration: Type.Optional(
    Type.Integer({ format: 'int64', minimum: 0, description: 'Generation last seen.' }),
  ),
  matchedNodes: Type.Optional(Type.Integer({ minimum: 0, description: 'Nodes the policy serves.' })),
  holderCount: Type.Optional(Type.Integer({ minimum: 0, description: 'Slots held now.' })),
  queueLength: Type.Optional(Type.Integer({ minimum: 0, description: 'Requests waiting for a slot.' })),
  holders: Type.Optional(Type.Array(MaintenanceHolder, { maxItems: 10_000, description: 'Nodes holding a slot.' })),
  queue: Type.Optional(Type.Array(QueuedRequest, { maxItems: 10_000, description: 'Requests waiting, in order.' })),
  recentCompletions: Type.Optional(
    Type.Array(MaintenanceCompletion, { maxItems: 50, description: 'The latest finished maintenances.' }),
  ),
  conditions: Type.Optional(ConditionList),
});
export type MaintenancePolicyStatus = Static<typeof MaintenancePolicyStatus>;

export const MAINTENANCE_POLICY_DEFINITION: ResourceDefinition = {
  names: KINDS.maintenancePolicy,
  scope: 'Cluster',
  description:
    'MaintenancePolicy: node-initiated maintenance (the Kustodian file protocol and Kured reboots): which nodes, how many at once, drain, windows and blockers.',
  spec: MaintenancePolicySpec,
  status: MaintenancePolicyStatus,
  printerColumns: [
    { name: 'Max', type: 'integer', jsonPath: '.spec.maxConcurrent', description: 'maxConcurrent' },
    { name: 'Nodes', type: 'integer', jsonPath: '.status.matchedNodes', description: 'Nodes the policy serves' },
    { name: 'Holders', type: 'integer', jsonPath: '.status.holderCount', description: 'Nodes holding a slot' },
    { name: 'Queued', type: 'integer', jsonPath: '.status.queueLength', description: 'Nodes waiting for a slot' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};

export interface MaintenancePolicy {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof KINDS.maintenancePolicy.kind;
  metadata: V1ObjectMeta;
  spec: MaintenancePolicySpec;
  status?: MaintenancePolicyStatus;
}
