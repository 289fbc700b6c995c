import { describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import type { DisruptionBudget } from '../../../../src/api/disruption-budget.js';
import { nodeAnnotations } from '../../../../src/api/names.js';
import { ClusterDisruptionArbiter, type RefusedWait } from '../../../../src/controllers/disruption/cluster-arbiter.js';
import { budget } from './budgets.js';

function v1Node(name: string, cordonedBy?: string): V1Node {
  return {
    metadata: { name, labels: {}, annotations: cordonedBy ? { [nodeAnnotations.cordon(cordonedBy)]: 'true' } : {} },
    spec: cordonedBy ? { unschedulable: true } : {},
  };
}

function setUp(budgets: DisruptionBudget[], names = ['a', 'b', 'c']) {
  const state = { now: 1_000_000, nodes: names.map((n) => v1Node(n)), budgets };
  const refused: Array<{ wait: RefusedWait; first: boolean }> = [];
  const arbiter = new ClusterDisruptionArbiter(
    { nodes: () => state.nodes, budgets: () => state.budgets, now: () => state.now },
    { reservationTtlMs: 10_000, waitMemoryMs: 30_000, onRefused: (wait, first) => refused.push({ wait, first }) },
  );
  const cordon = (name: string, scr = 's') => {
    state.nodes = state.nodes.map((n) => (n.metadata?.name === name ? v1Node(name, scr) : n));
  };
  const uncordon = (name: string) => {
    state.nodes = state.nodes.map((n) => (n.metadata?.name === name ? v1Node(name) : n));
  };
  return { state, arbiter, refused, cordon, uncordon };
}

describe('ClusterDisruptionArbiter', () => {
  it('grants everything when no budget exists', () => {
    const { arbiter } = setUp([]);
    for (const n of ['a', 'b', 'c']) expect(arbiter.tryAcquire(n, 'skyhook/s').granted).toBe(true);
  });

  it('reserves a granted node until its claim shows in the cache, so a second actor is refused meanwhile', () => {
    const { arbiter, cordon, uncordon } = setUp([budget('one', { maxDisrupted: { count: 1 } })]);
    expect(arbiter.tryAcquire('a', 'skyhook/s').granted).toBe(true);
    // The cache does not show a's cordon yet: the reservation counts.
    expect(arbiter.tryAcquire('b', 'nodeop/ns/op')).toMatchObject({ granted: false, budget: 'one' });
    cordon('a');
    expect(arbiter.tryAcquire('b', 'nodeop/ns/op').granted).toBe(false);
    // The same node again (joining): granted.
    expect(arbiter.tryAcquire('a', 'maintenance/p').granted).toBe(true);
    uncordon('a');
    expect(arbiter.tryAcquire('b', 'nodeop/ns/op').granted).toBe(true);
  });

  it("keeps a slot for a holder that joins a disrupted node with a claim of its own until that claim shows, though the other holder's release lands first", () => {
    const { state, arbiter, cordon } = setUp([budget('one', { maxDisrupted: { count: 1 } })]);
    cordon('a', 'first');
    // The second SCR joins a (the first still holds it): granted, and reserved for its own claim.
    expect(arbiter.tryAcquire('a', 'skyhook/second', nodeAnnotations.cordon('second')).granted).toBe(true);
    // The first SCR's release lands before the second's cordon: a must not look free meanwhile.
    state.nodes = state.nodes.map((n) => (n.metadata?.name === 'a' ? v1Node('a') : n));
    expect(arbiter.tryAcquire('b', 'skyhook/first', nodeAnnotations.cordon('first'))).toMatchObject({
      granted: false,
      budget: 'one',
    });
    // The second's cordon shows: its reservation is used, and a counts as the one disrupted node.
    cordon('a', 'second');
    expect(arbiter.tryAcquire('b', 'skyhook/first', nodeAnnotations.cordon('first')).granted).toBe(false);
    state.nodes = state.nodes.map((n) => (n.metadata?.name === 'a' ? v1Node('a') : n));
    expect(arbiter.tryAcquire('b', 'skyhook/first', nodeAnnotations.cordon('first')).granted).toBe(true);
  });

  it('lets a reservation whose write never happened expire after its TTL', () => {
    const { arbiter, state } = setUp([budget('one', { maxDisrupted: { count: 1 } })]);
    expect(arbiter.tryAcquire('a', 'skyhook/s').granted).toBe(true);
    state.now += 9_000;
    expect(arbiter.tryAcquire('b', 'skyhook/t').granted).toBe(false);
    state.now += 1_000;
    expect(arbiter.tryAcquire('b', 'skyhook/t').granted).toBe(true);
  });

  // Watches a minute late on a loaded API server: a 30 s limit freed the slot and granted it twice.
  it('keeps a reservation while the cache lags, past the old 30 s, until the 5-minute safety net, which says so', () => {
    const state = { now: 0, nodes: ['a', 'b'].map((n) => v1Node(n)) };
    const expired: unknown[] = [];
    const arbiter = new ClusterDisruptionArbiter(
      {
        nodes: () => state.nodes,
        budgets: () => [budget('one', { maxDisrupted: { count: 1 } })],
        now: () => state.now,
      },
      { onReservationExpired: (node, holder, ageMs) => expired.push([node, holder, ageMs]) },
    );
    expect(arbiter.tryAcquire('a', 'skyhook/s').granted).toBe(true);
    for (state.now of [30_001, 60_000, 5 * 60_000 - 1])
      expect(arbiter.tryAcquire('b', 'skyhook/t')).toMatchObject({ granted: false, budget: 'one' });
    expect(expired).toEqual([]);
    state.now = 5 * 60_000;
    expect(arbiter.tryAcquire('b', 'skyhook/t').granted).toBe(true);
    expect(expired).toEqual([['a', 'skyhook/s', 5 * 60_000]]);
  });

  it('ends a reservation on the node event that shows it disrupted, even when the cordon is lifted before anyone asks again', () => {
    const { arbiter } = setUp([budget('one', { maxDisrupted: { count: 1 } })]);
    expect(arbiter.tryAcquire('a', 'skyhook/s').granted).toBe(true);
    arbiter.observed(v1Node('b', 's'));
    expect(arbiter.tryAcquire('b', 'nodeop/ns/op').granted).toBe(false);
    // a's cordon event, then its uncordon: the cache never showed it disrupted when the arbiter was asked.
    arbiter.observed(v1Node('a', 's'));
    arbiter.observed(v1Node('a'));
    expect(arbiter.tryAcquire('b', 'nodeop/ns/op').granted).toBe(true);
  });

  it('loses nothing on a restart: a new arbiter over the same cache counts the claims on the nodes', () => {
    const first = setUp([budget('one', { maxDisrupted: { count: 1 } })]);
    first.arbiter.tryAcquire('a', 'skyhook/s');
    first.cordon('a');
    const restarted = new ClusterDisruptionArbiter({
      nodes: () => first.state.nodes,
      budgets: () => first.state.budgets,
      now: () => first.state.now,
    });
    expect(restarted.tryAcquire('b', 'skyhook/t').granted).toBe(false);
  });

  it('remembers refusals (first one flagged) for the budget status, and forgets them once granted or stale', () => {
    const { arbiter, refused, state, cordon, uncordon } = setUp([budget('one', { maxDisrupted: { count: 1 } })]);
    cordon('a');
    arbiter.tryAcquire('b', 'nodeop/ns/op');
    state.now += 5_000;
    arbiter.tryAcquire('b', 'nodeop/ns/op');
    arbiter.tryAcquire('c', 'skyhook/t');
    expect(refused.map((r) => r.first)).toEqual([true, false, true]);
    expect(arbiter.waits().map((w) => [w.node, w.holder, w.sinceMs])).toEqual([
      ['b', 'nodeop/ns/op', 1_000_000],
      ['c', 'skyhook/t', 1_005_000],
    ]);
    uncordon('a');
    expect(arbiter.tryAcquire('b', 'nodeop/ns/op').granted).toBe(true);
    expect(arbiter.waits().map((w) => w.node)).toEqual(['c']);
    state.now += 31_000;
    expect(arbiter.waits()).toEqual([]);
  });
});
