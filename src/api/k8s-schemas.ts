/**
 * Schemas of the core Kubernetes types the Skyhook API embeds (LabelSelector, Toleration, EnvVar,
 * metav1.Condition), written out because a CRD cannot `$ref` them.
 * Size bounds are generous; they exist so the API server's CEL cost estimator has limits to work with.
 */
import { Type, type Static } from 'typebox';
import { celRules, Quantity, StringEnum, StringMap } from './schema-helpers.js';

const LabelSelectorRequirement = Type.Object(
  {
    key: Type.String({ maxLength: 317, description: 'The label key the requirement applies to.' }),
    operator: StringEnum(['In', 'NotIn', 'Exists', 'DoesNotExist'], {
      description: "How the key's value is compared with values.",
    }),
    values: Type.Optional(
      Type.Array(Type.String({ maxLength: 63 }), {
        maxItems: 256,
        'x-kubernetes-list-type': 'atomic',
        description: 'Values for In and NotIn; empty for Exists and DoesNotExist.',
      }),
    ),
  },
  celRules({
    // metav1.LabelSelectorAsSelector refuses these; upstream rejects such a selector in its webhook.
    rule: "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)",
    message: 'values must be non-empty for operator In/NotIn and empty for Exists/DoesNotExist',
    fieldPath: '.values',
  }),
);

export function LabelSelector(description: string) {
  return Type.Object(
    {
      matchLabels: Type.Optional(
        StringMap(Type.String({ maxLength: 63 }), {
          maxProperties: 64,
          description: 'Labels that must all be present with exactly these values.',
        }),
      ),
      matchExpressions: Type.Optional(
        Type.Array(LabelSelectorRequirement, {
          maxItems: 32,
          'x-kubernetes-list-type': 'atomic',
          description: 'Requirements that must all hold (ANDed with matchLabels).',
        }),
      ),
    },
    { description, 'x-kubernetes-map-type': 'atomic' },
  );
}
export type LabelSelector = Static<ReturnType<typeof LabelSelector>>;

export const Toleration = Type.Object({
  key: Type.Optional(
    Type.String({ maxLength: 317, description: 'Taint key tolerated; empty with Exists: every key.' }),
  ),
  operator: Type.Optional(StringEnum(['Exists', 'Equal'], { description: 'Equal (the default) or Exists.' })),
  value: Type.Optional(Type.String({ maxLength: 63, description: 'Taint value, for operator Equal.' })),
  effect: Type.Optional(
    StringEnum(['NoSchedule', 'PreferNoSchedule', 'NoExecute'], { description: 'Taint effect tolerated; empty: all.' }),
  ),
  tolerationSeconds: Type.Optional(
    Type.Integer({ format: 'int64', description: 'For NoExecute: how long the pod stays once tainted.' }),
  ),
});
export type Toleration = Static<typeof Toleration>;

const KeySelector = Type.Object(
  {
    key: Type.String({ description: 'The key to read.' }),
    name: Type.Optional(Type.String({ default: '', description: 'Name of the object in the Job namespace.' })),
    optional: Type.Optional(Type.Boolean({ description: 'true: a missing object or key is not an error.' })),
  },
  { 'x-kubernetes-map-type': 'atomic', description: 'A key of a ConfigMap or Secret.' },
);

export const EnvVar = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 256, description: 'Variable name.' }),
  value: Type.Optional(Type.String({ description: 'Literal value.' })),
  valueFrom: Type.Optional(
    Type.Object(
      {
        configMapKeyRef: Type.Optional(KeySelector),
        secretKeyRef: Type.Optional(KeySelector),
        fieldRef: Type.Optional(
          Type.Object(
            {
              apiVersion: Type.Optional(Type.String({ description: 'API version of fieldPath; default v1.' })),
              fieldPath: Type.String({ description: 'Pod field to read, e.g. spec.nodeName.' }),
            },
            { 'x-kubernetes-map-type': 'atomic', description: 'A field of the pod.' },
          ),
        ),
        resourceFieldRef: Type.Optional(
          Type.Object(
            {
              containerName: Type.Optional(Type.String({ description: 'Container whose resource is read.' })),
              divisor: Type.Optional(Quantity({ description: 'Unit of the value; default 1.' })),
              resource: Type.String({ description: 'Resource to read, e.g. limits.memory.' }),
            },
            { 'x-kubernetes-map-type': 'atomic', description: "A container's resource request or limit." },
          ),
        ),
      },
      { description: 'Where the value comes from, instead of value.' },
    ),
  ),
});
export type EnvVar = Static<typeof EnvVar>;

/** Atomic like upstream's `[]corev1.EnvVar` (duplicate names are the container runtime's business). */
export const EnvList = Type.Array(EnvVar, { maxItems: 256 });

/** metav1.Condition with the bounds and patterns Kubernetes gives it. */
export const Condition = Type.Object({
  type: Type.String({
    maxLength: 316,
    pattern:
      '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    description: 'Condition type (docs/reference/names.md lists them).',
  }),
  status: StringEnum(['True', 'False', 'Unknown'], { description: 'Whether the condition holds.' }),
  observedGeneration: Type.Optional(
    Type.Integer({ format: 'int64', minimum: 0, description: 'metadata.generation the condition was set for.' }),
  ),
  lastTransitionTime: Type.String({ format: 'date-time', description: 'When status last changed.' }),
  reason: Type.String({
    minLength: 1,
    maxLength: 1024,
    pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    description: 'Machine-readable reason in CamelCase.',
  }),
  message: Type.String({ maxLength: 32768, description: 'What happened and what to do, for people.' }),
});
export type Condition = Static<typeof Condition>;

export const ConditionList = Type.Array(Condition, {
  description: 'Current conditions of the object, one per type.',
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
});

/** The metadata.generation a status was written for (every kind of ours reports it). */
export const ObservedGeneration = Type.Optional(
  Type.Integer({ format: 'int64', minimum: 0, description: 'metadata.generation the status was written for.' }),
);

/** The status of a kind that reports only conditions: the generation it was written for, and them. */
export const ConditionsStatus = Type.Object({
  observedGeneration: ObservedGeneration,
  conditions: Type.Optional(ConditionList),
});

/** A DNS-1123 subdomain, the form of node and most object names. */
export const OBJECT_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/**
 * A pull secret by name (a kubernetes.io/dockerconfigjson Secret in the Jobs' namespace). Unlike
 * corev1's LocalObjectReference the name is required and must be a DNS-1123 subdomain, so the API
 * server refuses a name that could never name a Secret instead of the kubelet ignoring it later.
 */
export const PullSecretReference = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 253,
    pattern: OBJECT_NAME_PATTERN,
    description: 'Name of the Secret (a DNS-1123 subdomain: lowercase letters, digits, `-` and `.`).',
  }),
});
export type PullSecretReference = Static<typeof PullSecretReference>;

/** Pull secrets, each named once. */
export function PullSecretList(description: string) {
  return Type.Array(PullSecretReference, {
    maxItems: 16,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['name'],
    description,
  });
}
