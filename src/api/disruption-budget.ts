/**
 * DisruptionBudget: a cluster-scoped cap on how many nodes of a node set our actors (every Skyhook's
 * interrupts, every NodeOp that cordons, every maintenance slot) may have taken out of service at
 * once. A per-SCR interruptionBudget or DeploymentPolicy budget only bounds its own SCR, so two SCRs
 * that each allow one node take down two; a separate kind is the one place all of them ask (why a
 * kind and not a field: docs/guides/disruption-budget.md). What counts as disrupted is
 * `isDisrupted` in jobs/cordon/claims.ts; the counting rules are controllers/disruption/budget-rules.ts.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Type, type Static } from 'typebox';
import { ConditionList, LabelSelector, ObservedGeneration } from './k8s-schemas.js';
import { MaintenanceWindows } from './maintenance-window.js';
import { type GROUP_VERSION, KINDS } from './names.js';
import type { ResourceDefinition } from './resource-definition.js';
import { celRules } from './schema-helpers.js';

const MAX_STATUS_NODES = 1000;

export const MaxDisrupted = Type.Object(
  {
    count: Type.Optional(Type.Integer({ minimum: 1, description: 'At most this many matched nodes disrupted.' })),
    percent: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        description: 'At most this percent of the matched nodes disrupted (rounded down, at least 1 node).',
      }),
    ),
  },
  {
    description: 'How many of the matched nodes may be disrupted at once: exactly one of count or percent.',
    ...celRules({
      rule: 'has(self.percent) != has(self.count)',
      message: 'maxDisrupted: set exactly one of count or percent',
    }),
  },
);
export type MaxDisrupted = Static<typeof MaxDisrupted>;

export const DisruptionBudgetSpec = Type.Object({
  nodeSelector: Type.Optional(LabelSelector('The nodes this budget covers; empty or absent: every node.')),
  maxDisrupted: MaxDisrupted,
  maintenanceWindows: Type.Optional(
    MaintenanceWindows(
      'When the nodes this budget covers may be newly disrupted (any window open = open; absent = always), by every actor: Skyhook interrupts, NodeOps that cordon or reboot, maintenance slots. Outside them each waits with OutsideMaintenanceWindow and the next opening in its own status; nodes already disrupted finish.',
    ),
  ),
});
export type DisruptionBudgetSpec = Static<typeof DisruptionBudgetSpec>;

export const BudgetWait = Type.Object({
  node: Type.String({ description: 'The node that waits.' }),
  /** `skyhook/<scr>`, `nodeop/<namespace>/<name>`, `maintenance/<policy>`. */
  holder: Type.String({ description: 'Who waits: skyhook/<scr>, nodeop/<namespace>/<name> or maintenance/<policy>.' }),
  since: Type.String({ format: 'date-time', description: 'When the wait started.' }),
});
export type BudgetWait = Static<typeof BudgetWait>;

const count = (description: string) => Type.Optional(Type.Integer({ minimum: 0, description }));

export const DisruptionBudgetStatus = Type.Object({
  observedGeneration: ObservedGeneration,
  matched: count('Nodes the selector matches now.'),
  maxDisrupted: count('The budget resolved against matched (a percent becomes a node count).'),
  disrupted: Type.Optional(
    Type.Array(Type.String(), {
      maxItems: MAX_STATUS_NODES,
      'x-kubernetes-list-type': 'atomic',
      description: 'Names of the matched nodes that are disrupted now.',
    }),
  ),
  disruptedCount: count('How many matched nodes are disrupted now.'),
  waiting: Type.Optional(
    Type.Array(BudgetWait, {
      maxItems: MAX_STATUS_NODES,
      'x-kubernetes-list-type': 'atomic',
      description: 'Nodes an actor wanted to disrupt but this budget refused, oldest first.',
    }),
  ),
  waitingCount: count('How many nodes wait for this budget.'),
  conditions: Type.Optional(ConditionList),
});
export type DisruptionBudgetStatus = Static<typeof DisruptionBudgetStatus>;

export const DISRUPTION_BUDGET_DEFINITION: ResourceDefinition = {
  names: KINDS.disruptionBudget,
  scope: 'Cluster',
  description:
    'DisruptionBudget: how many nodes of a node set may be disrupted at once across every Skyhook, NodeOp and maintenance slot.',
  spec: DisruptionBudgetSpec,
  status: DisruptionBudgetStatus,
  printerColumns: [
    { name: 'Max', type: 'integer', jsonPath: '.status.maxDisrupted', description: 'Nodes that may be disrupted' },
    { name: 'Disrupted', type: 'integer', jsonPath: '.status.disruptedCount', description: 'Nodes disrupted now' },
    { name: 'Waiting', type: 'integer', jsonPath: '.status.waitingCount', description: 'Nodes waiting for a slot' },
    { name: 'Matched', type: 'integer', jsonPath: '.status.matched', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};

export interface DisruptionBudget {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof KINDS.disruptionBudget.kind;
  metadata: V1ObjectMeta;
  spec: DisruptionBudgetSpec;
  status?: DisruptionBudgetStatus;
}
