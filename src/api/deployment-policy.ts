/**
 * DeploymentPolicy: how fast a Skyhook may roll out, per compartment of nodes, with a budget
 * (percent or count) and a batch strategy (fixed, linear or exponential). Upstream's mutating webhook
 * fills the strategy parameters; here they are CRD defaults, applied when the strategy is present,
 * which is the same thing. Upstream's validating webhook rules are CEL rules.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Type, type Static } from 'typebox';
import { HealthGates } from './health-gates.js';
import { ConditionsStatus, LabelSelector } from './k8s-schemas.js';
import { DEFAULT_COMPARTMENT, type GROUP_VERSION, KINDS } from './names.js';
import type { ResourceDefinition } from './resource-definition.js';
import { MaintenanceWindows } from './maintenance-window.js';
import { celRules, Nullable } from './schema-helpers.js';

export const STRATEGY_KINDS = ['fixed', 'linear', 'exponential'] as const;
export type StrategyKind = (typeof STRATEGY_KINDS)[number];

const MAX_COMPARTMENTS = 32;

export const Budget = Type.Object(
  {
    percent: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'Percent of the nodes (rounded down, at least 1).' }),
    ),
    count: Type.Optional(Type.Integer({ minimum: 1, description: 'Number of nodes.' })),
  },
  {
    description: 'Nodes of the compartment in progress at once: exactly one of percent or count.',
    ...celRules({
      rule: 'has(self.percent) != has(self.count)',
      message: 'budget: set exactly one of percent or count',
    }),
  },
);
export type Budget = Static<typeof Budget>;

/** The parameters every strategy shares, with upstream's defaults. */
const batchParameters = {
  initialBatch: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Size of the first batch.' })),
  batchThreshold: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 100,
      description: 'Percent of a batch that must succeed for it to count as successful.',
    }),
  ),
  failureThreshold: Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 1,
        description: 'Consecutive failed batches that stop the rollout; unset = never stop.',
      }),
    ),
  ),
  safetyLimit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 50,
      description: 'Progress percent below which failures shrink batches and may stop the rollout.',
    }),
  ),
};

export const Strategy = Type.Object(
  {
    fixed: Type.Optional(Type.Object(batchParameters, { description: 'Every batch has initialBatch nodes.' })),
    linear: Type.Optional(
      Type.Object(
        {
          ...batchParameters,
          delta: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Growth per batch.' })),
        },
        { description: 'Each batch is delta nodes larger than the one before.' },
      ),
    ),
    exponential: Type.Optional(
      Type.Object(
        {
          ...batchParameters,
          growthFactor: Type.Optional(Type.Integer({ minimum: 2, default: 2, description: 'Multiplier per batch.' })),
        },
        { description: 'Each batch is growthFactor times the one before.' },
      ),
    ),
  },
  {
    description: 'How batches grow: exactly one of fixed, linear or exponential; unset: no batches, the budget only.',
    ...celRules({
      rule: '(has(self.fixed) ? 1 : 0) + (has(self.linear) ? 1 : 0) + (has(self.exponential) ? 1 : 0) == 1',
      message: 'strategy: set exactly one of fixed, linear or exponential',
    }),
  },
);
export type Strategy = Static<typeof Strategy>;

export const Compartment = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 63,
    description: 'Compartment name, unique in the policy.',
    'x-kubernetes-validations': [
      { rule: `self != '${DEFAULT_COMPARTMENT}'`, message: `compartment name ${DEFAULT_COMPARTMENT} is reserved` },
    ],
  }),
  selector: LabelSelector('Nodes in this compartment.'),
  budget: Budget,
  strategy: Type.Optional(Strategy),
});
export type Compartment = Static<typeof Compartment>;

export const DeploymentPolicySpec = Type.Object({
  default: Type.Object(
    { budget: Budget, strategy: Strategy },
    { description: `Budget and strategy of the ${DEFAULT_COMPARTMENT} compartment: nodes that match no compartment.` },
  ),
  compartments: Type.Optional(
    Type.Array(Compartment, {
      description: 'Node groups with their own budget and strategy; a node belongs to the first that selects it.',
      maxItems: MAX_COMPARTMENTS,
      // A map list: the API server refuses duplicate names ("Duplicate value").
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      ...celRules({
        rule: 'self.all(a, self.exists_one(b, b.selector == a.selector))',
        message: 'compartments: two compartments have the same selector',
      }),
    }),
  ),
  resetBatchStateOnCompletion: Type.Optional(
    Type.Boolean({ default: true, description: 'Restart the batches at 1 when a rollout completes.' }),
  ),
  maintenanceWindows: Type.Optional(
    MaintenanceWindows(
      'Ours: when interrupts may start on the nodes of Skyhooks using this policy (any window open = open; absent = always). Outside them no node newly starts an interrupt; nodes already interrupted finish, and stages without an interrupt go on.',
    ),
  ),
  healthGates: Type.Optional(HealthGates),
});
export type DeploymentPolicySpec = Static<typeof DeploymentPolicySpec>;

/** Ours (upstream has no status): lets the operator report, e.g., which Skyhooks use the policy. */
export const DeploymentPolicyStatus = ConditionsStatus;
export type DeploymentPolicyStatus = Static<typeof DeploymentPolicyStatus>;

export const DEPLOYMENT_POLICY_DEFINITION: ResourceDefinition = {
  names: KINDS.deploymentPolicy,
  scope: 'Cluster',
  description:
    'DeploymentPolicy: rollout budgets and batch strategies per compartment of nodes, referenced by Skyhooks.',
  spec: DeploymentPolicySpec,
  status: DeploymentPolicyStatus,
  printerColumns: [],
};

export interface DeploymentPolicy {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof KINDS.deploymentPolicy.kind;
  metadata: V1ObjectMeta;
  spec: DeploymentPolicySpec;
  status?: DeploymentPolicyStatus;
}
