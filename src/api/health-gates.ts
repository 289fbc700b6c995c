/**
 * Health gates of a DeploymentPolicy (`spec.healthGates`): checks a rollout waits on before it takes
 * more nodes down (`beforeBatch`) and before it gives a node it interrupted back (`beforeUncordon`).
 * Each gate is one check (node conditions, a CEL expression over the Node, pods Ready on the node, or
 * a Prometheus query / alert list) with a timeout after which the node is erroring with the gate's
 * reason. The schema lives here, apart from deployment-policy.ts, so the policy file stays about
 * budgets and strategies; the evaluation is the Skyhook controller's (views/health-gates/), the
 * decision the planner's (plan/health-gate-plan.ts).
 */
import { Type, type Static } from 'typebox';
import { parseDurationMs } from '../util/duration.js';
import { LabelSelector } from './k8s-schemas.js';
import { celRules, Duration, StringEnum } from './schema-helpers.js';

export const GATE_POINTS = ['beforeBatch', 'beforeUncordon'] as const;
export type GatePoint = (typeof GATE_POINTS)[number];

/** `Absent`: the node has no condition of that type (NPD-style conditions before their detector ran). */
export const CONDITION_EXPECTATIONS = ['True', 'False', 'Unknown', 'Absent'] as const;

/** How long a gate may fail before its node is erroring, when the gate sets no timeout. */
export const DEFAULT_GATE_TIMEOUT = '30m';

const MAX_GATES = 16;

export const NodeConditionCheck = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 316, description: 'Condition type, e.g. Ready or GPUHealthy.' }),
  status: StringEnum(CONDITION_EXPECTATIONS, {
    description: 'The status the condition must have, or Absent: no condition of that type.',
  }),
});
export type NodeConditionCheck = Static<typeof NodeConditionCheck>;

export const PodsCheck = Type.Object({
  selector: LabelSelector('Pods this gate waits for; at least one must be on the node, and all of them Ready.'),
  namespace: Type.Optional(
    Type.String({ minLength: 1, maxLength: 63, description: 'Only pods of this namespace; unset = every namespace.' }),
  ),
});
export type PodsCheck = Static<typeof PodsCheck>;

export const PrometheusCheck = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^https?://',
      description: 'Base URL of the Prometheus API, e.g. http://prometheus.monitoring:9090.',
    }),
    query: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description:
          'PromQL instant query; the gate passes when it returns no sample. `$node` is replaced by the node name.',
      }),
    ),
    alerts: Type.Optional(
      Type.Object(
        {
          match: Type.Optional(
            Type.String({ maxLength: 1024, description: 'Regexp on alertname: only matching alerts count.' }),
          ),
          ignore: Type.Optional(
            Type.String({ maxLength: 1024, description: 'Regexp on alertname: matching alerts never count.' }),
          ),
        },
        { description: 'Firing alerts (as kured reads them): the gate passes while none counts.' },
      ),
    ),
  },
  celRules({
    rule: 'has(self.query) != has(self.alerts)',
    message: 'prometheus: set exactly one of query or alerts',
  }),
);
export type PrometheusCheck = Static<typeof PrometheusCheck>;

export const HealthGate = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 63,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
      description: 'Names the gate in waits, Events and errors.',
    }),
    timeout: Type.Optional(
      Duration({
        description: `How long the gate may fail before the node is erroring with its reason (default ${DEFAULT_GATE_TIMEOUT}).`,
      }),
    ),
    nodeConditions: Type.Optional(
      Type.Array(NodeConditionCheck, { minItems: 1, maxItems: 16, description: 'All must hold.' }),
    ),
    cel: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: 'CEL expression over the Node as `node`, true when healthy.',
      }),
    ),
    pods: Type.Optional({ ...PodsCheck, description: 'Pods on the node that must all be Ready (at least one).' }),
    prometheus: Type.Optional({
      ...PrometheusCheck,
      description: 'A Prometheus query or firing alerts; an unreachable Prometheus fails the gate.',
    }),
  },
  celRules({
    rule: '(has(self.nodeConditions) ? 1 : 0) + (has(self.cel) ? 1 : 0) + (has(self.pods) ? 1 : 0) + (has(self.prometheus) ? 1 : 0) == 1',
    message: 'healthGates: a gate sets exactly one of nodeConditions, cel, pods or prometheus',
  }),
);
export type HealthGate = Static<typeof HealthGate>;

const gateList = (description: string) =>
  Type.Optional(
    Type.Array(HealthGate, {
      maxItems: MAX_GATES,
      description,
      // A map list: the API server refuses two gates of the same name at one point ("Duplicate value").
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    }),
  );

export const HealthGates = Type.Object(
  {
    beforeBatch: gateList(
      'Must pass on each node the rollout finished before its slot goes to another node (the next batch).',
    ),
    beforeUncordon: gateList('Must pass on a node this Skyhook interrupted before its cordon is lifted.'),
  },
  { description: 'Checks the rollout waits on; each gate has a timeout after which the node is erroring.' },
);
export type HealthGates = Static<typeof HealthGates>;

/** The gate's timeout in milliseconds. */
export function gateTimeoutMs(gate: HealthGate): number {
  return parseDurationMs(gate.timeout ?? DEFAULT_GATE_TIMEOUT);
}

/** The field path of a gate, for messages that name it (`spec.healthGates.beforeBatch[0]`). */
export const gateField = (point: GatePoint, index: number): string => `spec.healthGates.${point}[${index}]`;

/** One gate's result on one node, as the controller evaluated it from its caches (and Prometheus). */
export interface GateCheckResult {
  passed: boolean;
  /** What failed, e.g. `condition GPUHealthy is False`; absent when passed. */
  detail?: string;
}

/** What the planner is given of the health gates: results per policy, node and gate, and spec problems. */
export interface HealthGateResults {
  /** Per DeploymentPolicy: problems the API server cannot see (a CEL expression that does not compile), each naming its field. */
  problems: Record<string, string[]>;
  /** Per DeploymentPolicy, node and `gateKey(point, name)`: the gate's result on the node now. */
  results: Record<string, Record<string, Record<string, GateCheckResult>>>;
}

export const gateKey = (point: GatePoint, name: string): string => `${point}/${name}`;
