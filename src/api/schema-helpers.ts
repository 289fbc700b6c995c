/**
 * The few typebox builders the CRD rules need. typebox's own `Record` emits `patternProperties` and
 * `Union(Literal…)` emits `anyOf` of `const`, both of which a CRD schema forbids, so maps and enums
 * are written here in the form the API server accepts, while still giving precise static types.
 */
import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';

/** A string restricted to a fixed set of values (`enum`, which both ajv and the API server enforce). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A map with arbitrary string keys (`additionalProperties: <schema>`, no `properties`). */
export function StringMap<V extends TSchema>(
  values: V,
  options: Record<string, unknown> = {},
): TUnsafe<Record<string, Static<V>>> {
  return Type.Unsafe<Record<string, Static<V>>>({ type: 'object', additionalProperties: values, ...options });
}

/**
 * A status map keyed by node name that the operator alone writes: atomic for server-side field
 * management. As a granular map (the default for maps; lists are atomic unless they say otherwise)
 * the API server records every node's entry, and every field in it, in `managedFields`: a second
 * copy of the map's shape kept, stored and sent with the object. For a 1000-node Skyhook status
 * that was 146 KB beside 206 KB, and each status write cost the API server 379 ms of CPU instead
 * of 188 ms (`npm run bench -- status-write`; docs/design/history.md). Only the server's record of ownership changes: merge patches still
 * merge entry by entry, and the object, its validation and every reader see the same.
 */
export function PerNodeMap<V extends TSchema>(
  values: V,
  options: Record<string, unknown> = {},
): TUnsafe<Record<string, Static<V>>> {
  return StringMap(values, { ...options, 'x-kubernetes-map-type': 'atomic' });
}

/**
 * One CEL rule of `x-kubernetes-validations`. The API server prefixes `message` with the path of the
 * schema node that holds the rule (or of `fieldPath`, relative to it), so a message need not repeat
 * the path but should name the field it is about.
 */
export interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** Schema options that attach CEL rules to a node; spread into typebox options. */
export function celRules(...rules: CelRule[]): { 'x-kubernetes-validations': CelRule[] } {
  return { 'x-kubernetes-validations': rules };
}

/** A Kubernetes quantity (`"500m"`, `"1Gi"`, `2`): int-or-string, as kubebuilder renders resource.Quantity. */
export function Quantity(options: Record<string, unknown> = {}): TUnsafe<number | string> {
  return Type.Unsafe<number | string>({
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: QUANTITY_PATTERN,
    'x-kubernetes-int-or-string': true,
    ...options,
  });
}

/** resource.Quantity's serialised form. */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** A quantity above zero: no sign, and a non-zero digit in the number part. */
export const POSITIVE_QUANTITY_PATTERN =
  '^\\+?(([0-9]*[1-9][0-9]*(\\.[0-9]*)?)|([0-9]*\\.[0-9]*[1-9][0-9]*))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/**
 * A quantity that must be above zero. Checked by pattern (strings) and minimum (integers), which
 * costs no CEL. A CEL rule that parses an int-or-string needs a maxLength on it to fit the cost
 * budget (the estimator bounds it by that from Kubernetes 1.34 on; see PackageResources).
 */
export function PositiveQuantity(options: Record<string, unknown> = {}): TUnsafe<number | string> {
  return Quantity({ pattern: POSITIVE_QUANTITY_PATTERN, minimum: 1, ...options });
}

/**
 * A non-negative Go duration string as metav1.Duration accepts it (`46s`, `1h30m`, `0`). Negative
 * values are refused by the pattern, which is what upstream's "must be greater than or equal to 0"
 * checks of stageTimeout and drainConfig amount to.
 */
export function Duration(options: Record<string, unknown> = {}): TUnsafe<string> {
  return Type.Unsafe<string>({ type: 'string', maxLength: 64, pattern: DURATION_PATTERN, ...options });
}

export const DURATION_PATTERN = '^(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$';

/** A field that may be explicitly `null` (OpenAPI `nullable`), as upstream's pointer fields are. */
export function Nullable<S extends TSchema>(schema: S): TUnsafe<Static<S> | null> {
  return Type.Unsafe<Static<S> | null>({ ...schema, nullable: true });
}
