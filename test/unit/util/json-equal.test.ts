/** sameJson answers as comparing key-sorted JSON would, without building it. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { sameJson } from '../../../src/util/json-equal.js';

/** The comparison sameJson replaces: JSON with object keys sorted. */
function canonical(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : inner,
  );
}

/** Values as planner statuses hold them, plus what JSON treats specially (undefined, functions, Dates, NaN). */
const leaf = fc.oneof(
  fc.string({ maxLength: 3 }),
  fc.integer({ min: -2, max: 2 }),
  fc.constantFrom(true, false, null, undefined, Number.NaN, Number.POSITIVE_INFINITY, -0, () => 1),
  fc.constantFrom(new Date('2030-01-01T00:00:00Z'), new Date('2030-01-02T00:00:00Z')),
);
const keys = fc.constantFrom('a', 'b', 'c', 'node-1', 'status');
const { json } = fc.letrec((tie) => ({
  json: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('json'), { maxLength: 3 }),
  object: fc.dictionary(keys, tie('json'), { maxKeys: 4 }),
}));

/** The same value with every object's keys in another order. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reordered(v)]),
  );
}

describe('sameJson', () => {
  it('agrees with comparing key-sorted JSON on arbitrary pairs', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        expect(sameJson(a, b)).toBe(canonical(a) === canonical(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('ignores key order and agrees on near misses', () => {
    fc.assert(
      fc.property(json, (a) => {
        expect(sameJson(a, reordered(a))).toBe(true);
        const changed = { wrapper: a, extra: 1 };
        expect(sameJson({ wrapper: a }, changed)).toBe(canonical({ wrapper: a }) === canonical(changed));
      }),
      { numRuns: 1000 },
    );
  });

  it('follows JSON for omitted members, array holes, toJSON and non-finite numbers', () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: 1, f: () => 2 }, { a: 1 })).toBe(true);
    expect(sameJson([undefined], [null])).toBe(true);
    expect(sameJson({ at: new Date('2030-01-01T00:00:00Z') }, { at: '2030-01-01T00:00:00.000Z' })).toBe(true);
    expect(sameJson({ n: Number.NaN }, { n: null })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameJson({ a: {} }, { a: [] })).toBe(false);
    expect(sameJson('1', 1)).toBe(false);
  });
});
