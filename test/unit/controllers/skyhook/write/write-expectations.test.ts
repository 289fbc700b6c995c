import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  type ExpiredExpectation,
  SAFETY_NET_MS,
  WriteExpectations,
} from '../../../../../src/controllers/skyhook/write/write-expectations.js';

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

  it('hands every noted write, of any scope, to onWrote after noting it (the controller writes it through to its cache)', () => {
    const cache = new Map<string, string>();
    const seenAwaiting: boolean[] = [];
    const root = new WriteExpectations(() => 0, '', undefined, {
      onWrote: (kind, object) => {
        seenAwaiting.push(root.awaits(kind, object.metadata?.name ?? ''));
        cache.set(`${kind}/${object.metadata?.name}`, object.metadata?.resourceVersion ?? '');
      },
    });
    const scr = root.scoped('scr-a');
    scr.wrote('Node', node('10'));
    // A write that returned no version is neither noted nor written through.
    scr.wrote('Node', { metadata: { name: 'n2' } });
    expect(cache).toEqual(new Map([['Node/n1', '10']]));
    // Noted before it is written through: the cache's events for it find a reconcile waiting to see it.
    expect(seenAwaiting).toEqual([true]);
    expect(scr.unmet((kind, name) => node(cache.get(`${kind}/${name}`) ?? '0'))).toEqual([]);
  });

  it('waits for a deleted object to leave the cache or be marked deleted', () => {
    const expectations = new WriteExpectations(() => 0);
    expectations.deleted('NodeOp', 'n1');
    expect(expectations.unmet(() => node('5'))).toEqual(['NodeOp/n1']);
    expect(expectations.unmet(() => node('5', true))).toEqual([]);
  });

  // Exact, of every kind: missing from the cache means deleted since only once its informer got past the write.
  it('counts a written object missing from the cache as deleted since only once its informer has seen a later resourceVersion', () => {
    const expectations = new WriteExpectations(() => 0);
    const kinds = ['Node', 'Skyhook', 'NodeOp', 'ConfigMap'];
    for (const kind of kinds) expectations.wrote(kind, node('10'));
    const behind = kinds.map((kind) => `${kind}/n1`);
    expect(expectations.unmet(() => undefined)).toEqual(behind);
    expect(
      expectations.unmet(
        () => undefined,
        () => '',
      ),
    ).toEqual(behind);
    expect(
      expectations.unmet(
        () => undefined,
        () => '9',
      ),
    ).toEqual(behind);
    // The Node informer got to 10, the SCR informer past it; the others have not yet.
    expect(
      expectations.unmet(
        () => undefined,
        (kind) => ({ Node: '10', Skyhook: '11' })[kind] ?? '9',
      ),
    ).toEqual(['NodeOp/n1', 'ConfigMap/n1']);
    expect(
      expectations.unmet(
        () => undefined,
        () => '12',
      ),
    ).toEqual([]);
  });

  // The 5000-node overshoot: watches over 30 s late, a 30 s TTL dropped the expectations and a pass
  // planned from a cache without the nodes the previous pass had admitted.
  it('keeps waiting for a cache that lags far past the old 30 s limit', () => {
    let now = 0;
    const expired: unknown[] = [];
    const expectations = new WriteExpectations(() => now, '', undefined, { onExpired: (e) => expired.push(e) });
    expectations.wrote('Node', node('10'));
    expectations.wrote('NodeOp', node('11'));
    for (now of [30_001, 60_000, SAFETY_NET_MS]) {
      expect(
        expectations.unmet(
          () => node('9'),
          () => '9',
        ),
      ).toEqual(['Node/n1', 'NodeOp/n1']);
      expect(
        expectations.unmet(
          () => undefined,
          () => '9',
        ),
      ).toEqual(['Node/n1', 'NodeOp/n1']);
    }
    expect(expired).toEqual([]);
    expect(expectations.awaits('Node', 'n1')).toBe(true);
  });

  // A broken watch (no event, no bookmark) must not hold the SCR back forever, nor be dropped unseen.
  it.each([
    ['a write', (e: WriteExpectations) => e.wrote('Node', node('10'))],
    ['a deletion', (e: WriteExpectations) => e.deleted('Node', 'n1')],
  ])('drops %s the cache never shows after the 5-minute safety net, and says so', (_, record) => {
    let now = 1_000;
    const expired: ExpiredExpectation[] = [];
    const root = new WriteExpectations(() => now, '', undefined, { onExpired: (e) => expired.push(e) });
    const expectations = root.scoped('scr');
    record(expectations);
    expect(expectations.unmet(() => node('9'))).toEqual(['Node/n1']);
    now += SAFETY_NET_MS;
    expect(expectations.unmet(() => node('9'))).toEqual(['Node/n1']);
    expect(expired).toEqual([]);
    now += 1;
    expect(expectations.unmet(() => node('9'))).toEqual([]);
    expect(expired).toEqual([{ owner: 'scr', kind: 'Node', name: 'n1', ageMs: SAFETY_NET_MS + 1 }]);
    expect(expectations.awaits('Node', 'n1')).toBe(false);
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
  it('tells whether an SCR is behind by looking at its oldest writes first, stopping at the first the cache misses', () => {
    const root = new WriteExpectations(() => 0);
    const s1 = root.scoped('s1');
    const named = (name: string, resourceVersion: string): KubernetesObject => ({
      metadata: { name, resourceVersion },
    });
    for (let i = 0; i < 100; i++) s1.wrote('Node', named(`n${i}`, String(100 + i)));
    root.scoped('s2').wrote('Node', named('other', '1'));
    // The cache has caught up to n0..n9 only.
    const looked: string[] = [];
    const lookup = (_kind: string, name: string): KubernetesObject => {
      looked.push(name);
      const i = Number(name.slice(1));
      return named(name, name.startsWith('n') && i < 10 ? String(100 + i) : '0');
    };
    expect(s1.behind(lookup)).toBe(true);
    // n0..n9 seen and forgotten, n10 missed: 11 lookups, none of s2's writes.
    expect(looked).toEqual(Array.from({ length: 11 }, (_, i) => `n${i}`));
    expect(s1.unmet(lookup)).toHaveLength(90);
    expect(s1.behind(() => named('x', '999'))).toBe(false);
    expect(s1.unmet(() => undefined)).toEqual([]);
    expect(root.unmet(() => undefined)).toEqual(['Node/other']);
  });
});
