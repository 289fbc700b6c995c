/**
 * Schemas of the core Kubernetes types the Skyhook API embeds (LabelSelector, Toleration, EnvVar,
 * LocalObjectReference, metav1.Condition), written out because a CRD cannot `$ref` them.
 * Size bounds are generous; they exist so the API server's CEL cost estimator has limits to work with.
 */
import { Type, type Static } from 'typebox';
import { celRules, Quantity, StringEnum, StringMap } from './schema-helpers.js';

const LabelSelectorRequirement = Type.Object(
  {
    key: Type.String({ maxLength: 317 }),
    operator: StringEnum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
    values: Type.Optional(
      Type.Array(Type.String({ maxLength: 63 }), { maxItems: 256, 'x-kubernetes-list-type': 'atomic' }),
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
      matchLabels: Type.Optional(StringMap(Type.String({ maxLength: 63 }), { maxProperties: 64 })),
      matchExpressions: Type.Optional(
        Type.Array(LabelSelectorRequirement, { maxItems: 32, 'x-kubernetes-list-type': 'atomic' }),
      ),
    },
    { description, 'x-kubernetes-map-type': 'atomic' },
  );
}
export type LabelSelector = Static<ReturnType<typeof LabelSelector>>;

export const Toleration = Type.Object({
  key: Type.Optional(Type.String({ maxLength: 317 })),
  operator: Type.Optional(StringEnum(['Exists', 'Equal'])),
  value: Type.Optional(Type.String({ maxLength: 63 })),
  effect: Type.Optional(StringEnum(['NoSchedule', 'PreferNoSchedule', 'NoExecute'])),
  tolerationSeconds: Type.Optional(Type.Integer({ format: 'int64' })),
});
export type Toleration = Static<typeof Toleration>;

const KeySelector = Type.Object(
  {
    key: Type.String(),
    name: Type.Optional(Type.String({ default: '' })),
    optional: Type.Optional(Type.Boolean()),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

export const EnvVar = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 256 }),
  value: Type.Optional(Type.String()),
  valueFrom: Type.Optional(
    Type.Object({
      configMapKeyRef: Type.Optional(KeySelector),
      secretKeyRef: Type.Optional(KeySelector),
      fieldRef: Type.Optional(
        Type.Object(
          { apiVersion: Type.Optional(Type.String()), fieldPath: Type.String() },
          { 'x-kubernetes-map-type': 'atomic' },
        ),
      ),
      resourceFieldRef: Type.Optional(
        Type.Object(
          { containerName: Type.Optional(Type.String()), divisor: Type.Optional(Quantity()), resource: Type.String() },
          { 'x-kubernetes-map-type': 'atomic' },
        ),
      ),
    }),
  ),
});
export type EnvVar = Static<typeof EnvVar>;

/** Atomic like upstream's `[]corev1.EnvVar` (duplicate names are the container runtime's business). */
export const EnvList = Type.Array(EnvVar, { maxItems: 256 });

export const LocalObjectReference = Type.Object(
  { name: Type.String({ default: '' }) },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type LocalObjectReference = Static<typeof LocalObjectReference>;

/** metav1.Condition with the bounds and patterns Kubernetes gives it. */
export const Condition = Type.Object({
  type: Type.String({
    maxLength: 316,
    pattern:
      '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
  }),
  status: StringEnum(['True', 'False', 'Unknown']),
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64', minimum: 0 })),
  lastTransitionTime: Type.String({ format: 'date-time' }),
  reason: Type.String({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
  message: Type.String({ maxLength: 32768 }),
});
export type Condition = Static<typeof Condition>;

export const ConditionList = Type.Array(Condition, {
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
});

/** A DNS-1123 subdomain, the form of node and most object names. */
export const OBJECT_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
