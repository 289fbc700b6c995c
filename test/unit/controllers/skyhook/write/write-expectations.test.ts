import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { WriteExpectations } from '../../../../../src/controllers/skyhook/write/write-expectations.js';

const node = (resourceVersion: string, deleted = false): KubernetesObject => ({
  metadata: { name: 'n1', resourceVersion, ...(deleted ? { deletionTimestamp: new Date() } : {}) },
});

describe('WriteExpectations', () => {
  it('waits until the cache shows the written resourceVersion or a later one', () => {
    const expectations = new WriteExpectations(() => 0);
    expectations.wrote('Node', node('10'));
    expect(expectations.unmet(() => node('9'))).toEqual(['Node/n1']);
    expect(expectations.unmet(() => node('11'))).toEqual([]);
    expect(expectations.awaits('Node', 'n1')).toBe(false);
  });

  it('waits for a deleted object to leave the cache or be marked deleted', () => {
    const expectations = new WriteExpectations(() => 0);
    expectations.deleted('NodeOp', 'n1');
    expect(expectations.unmet(() => node('5'))).toEqual(['NodeOp/n1']);
    expect(expectations.unmet(() => node('5', true))).toEqual([]);
  });

  it('counts a written node or SCR missing from the cache as deleted since, but not a NodeOp or ConfigMap it may not have seen created', () => {
    const expectations = new WriteExpectations(() => 0);
    for (const kind of ['Node', 'Skyhook', 'NodeOp', 'ConfigMap']) expectations.wrote(kind, node('10'));
    expect(expectations.unmet(() => undefined)).toEqual(['NodeOp/n1', 'ConfigMap/n1']);
  });

  // A write the cache never shows (e.g. overtaken by a relist) must not hold the SCR back forever.
  it.each([
    ['a write', (e: WriteExpectations) => e.wrote('Node', node('10'))],
    ['a deletion', (e: WriteExpectations) => e.deleted('Node', 'n1')],
  ])('drops %s not seen within the TTL', (_, record) => {
    let now = 0;
    const expectations = new WriteExpectations(() => now);
    record(expectations);
    expect(expectations.unmet(() => node('9'))).toEqual(['Node/n1']);
    now = 30_001;
    expect(expectations.unmet(() => node('9'))).toEqual([]);
  });

  // Five SCRs rolling out together starved each other while each waited for every SCR's writes.
  it("holds an SCR's reconcile back for its own writes only", () => {
    const expectations = new WriteExpectations(() => 0);
    const first = expectations.scoped('first');
    const second = expectations.scoped('second');
    first.wrote('Node', node('10'));
    expect(first.unmet(() => node('9'))).toEqual(['Node/n1']);
    expect(second.unmet(() => node('9'))).toEqual([]);
    // The root still sees every owner's writes, and so does an event filter asking `awaits`.
    expect(expectations.unmet(() => node('9'))).toEqual(['Node/n1']);
    expect(second.awaits('Node', 'n1')).toBe(true);
  });

  it('forgets an object as awaited only once every owner that wrote it has seen its write', () => {
    const expectations = new WriteExpectations(() => 0);
    const first = expectations.scoped('first');
    const second = expectations.scoped('second');
    first.wrote('Node', node('10'));
    second.wrote('Node', node('12'));
    expect(first.unmet(() => node('11'))).toEqual([]);
    expect(expectations.awaits('Node', 'n1')).toBe(true);
    expect(second.unmet(() => node('11'))).toEqual(['Node/n1']);
    expect(second.unmet(() => node('12'))).toEqual([]);
    expect(expectations.awaits('Node', 'n1')).toBe(false);
  });
});
