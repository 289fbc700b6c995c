/**
 * The slot decisions of a MaintenancePolicy without a cluster: arrival order, maxConcurrent, the
 * TTL of a silent holder, release when a node is deleted or done, orphaned claims, held requests.
 */
import { describe, expect, it } from '@jest/globals';
import type { LeaseState, MaintenanceGrant } from '../../../../src/api/maintenance-protocol.js';
import type { NodeCordonView } from '../../../../src/jobs/cordon/claims.js';
import { planSlots, type SlotInput, type SlotPolicy } from '../../../../src/controllers/maintenance/slots.js';

const CLAIM = 'skyhook.nvidia.com/maintenance_p';
const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();

const policy = (over: Partial<SlotPolicy> = {}): SlotPolicy => ({
  name: 'p',
  maxConcurrent: 3,
  protocols: new Set(['maintenance', 'reboot']),
  rebootWindow: { open: true },
  ...over,
});

const requestOf = (node: string, s: number, protocol: 'maintenance' | 'reboot' = 'maintenance'): LeaseState => ({
  node,
  request: { protocol, requestedAt: at(s) },
  renewedAtMs: T0,
});

const holding = (node: string, s: number, grant: Partial<MaintenanceGrant> = {}): LeaseState => ({
  ...requestOf(node, s),
  grant: { policy: 'p', requestedAt: at(s), grantedAt: at(s + 1), phase: 'drained', ...grant },
});

function input(leases: LeaseState[], over: Partial<SlotInput> = {}): SlotInput {
  const names = Array.from({ length: 20 }, (_, i) => `n${String(i).padStart(2, '0')}`);
  const nodes = new Map<string, NodeCordonView>(names.map((n) => [n, { unschedulable: false, annotations: {} }]));
  return {
    policy: policy(),
    nodes,
    served: new Set(names),
    leases,
    claim: CLAIM,
    backoff: new Map(),
    now: T0 + 100_000,
    ...over,
  };
}

describe('planSlots', () => {
  it('queues requests in arrival order (then node name), whatever the order of the Leases', () => {
    const plan = planSlots(input([requestOf('n05', 3), requestOf('n01', 5), requestOf('n09', 1), requestOf('n02', 3)]));
    expect(plan.queue.map((q) => q.node)).toEqual(['n09', 'n02', 'n05', 'n01']);
    expect(plan.freeSlots).toBe(3);
  });

  it('counts holders against maxConcurrent and never queues a holder', () => {
    const plan = planSlots(input([holding('n01', 1), holding('n02', 2), requestOf('n03', 0), requestOf('n04', 4)]));
    expect(plan.holders.map((h) => h.node)).toEqual(['n01', 'n02']);
    expect(plan.freeSlots).toBe(1);
    expect(plan.queue.map((q) => q.node)).toEqual(['n03', 'n04']);
    const full = planSlots(input([holding('n01', 1), holding('n02', 2), holding('n03', 3), requestOf('n04', 0)]));
    expect(full.freeSlots).toBe(0);
  });

  it('releases a holder whose node was deleted, and never queues a deleted node', () => {
    const base = input([holding('n01', 1), requestOf('n02', 2)]);
    const nodes = new Map(base.nodes);
    nodes.delete('n01');
    nodes.delete('n02');
    const plan = planSlots({ ...base, nodes });
    expect(plan.releases).toEqual([expect.objectContaining({ node: 'n01', reason: 'NodeDeleted', nodeExists: false })]);
    expect(plan.holders).toEqual([]);
    expect(plan.queue).toEqual([]);
    expect(plan.freeSlots).toBe(3);
  });

  it('releases a holder whose daemon has been silent for lockTTL, counted from its last heartbeat', () => {
    const silent = { ...holding('n01', 1), renewedAtMs: T0 + 10_000 };
    const alive = { ...holding('n02', 1), renewedAtMs: T0 + 95_000 };
    const plan = planSlots(input([silent, alive], { policy: policy({ ttlMs: 60_000 }) }));
    expect(plan.releases.map((r) => [r.node, r.reason])).toEqual([['n01', 'Expired']]);
    expect(plan.holders.map((h) => h.node)).toEqual(['n02']);
    // n02 expires at its heartbeat + TTL: the reconcile looks again then.
    expect(plan.nextChangeMs).toBe(T0 + 155_000);
    expect(planSlots(input([silent])).releases).toEqual([]);
  });

  it('releases a holder that reported done, and one whose request is gone or newer than its grant', () => {
    const done = { ...holding('n01', 1), done: { requestedAt: at(1), completedAt: at(50) } };
    const withdrawn: LeaseState = { node: 'n02', grant: holding('n02', 1).grant! };
    const newer = { ...holding('n03', 1), request: { protocol: 'maintenance' as const, requestedAt: at(60) } };
    const plan = planSlots(input([done, withdrawn, newer]));
    expect(plan.releases.map((r) => [r.node, r.reason])).toEqual([
      ['n01', 'Completed'],
      ['n02', 'Withdrawn'],
      ['n03', 'Withdrawn'],
    ]);
  });

  it('keeps a holder whose script failed (no done) for as long as it reports', () => {
    const plan = planSlots(input([holding('n01', 1, { phase: 'drained' })], { policy: policy({ ttlMs: 600_000 }) }));
    expect(plan.holders.map((h) => h.node)).toEqual(['n01']);
    expect(plan.releases).toEqual([]);
  });

  it('lifts a cordon claim of the policy that no grant explains', () => {
    const base = input([holding('n01', 1)]);
    const nodes = new Map(base.nodes);
    nodes.set('n01', { unschedulable: true, annotations: { [CLAIM]: 'true' } });
    nodes.set('n02', { unschedulable: true, annotations: { [CLAIM]: 'true' } });
    const plan = planSlots({ ...base, nodes });
    expect(plan.releases.map((r) => [r.node, r.reason])).toEqual([['n02', 'Orphaned']]);
  });

  it('holds requests of nodes it does not serve out of the queue, and a grant of another policy', () => {
    const other = holding('n01', 1, { policy: 'q' });
    const plan = planSlots(input([other, requestOf('n02', 2)], { served: new Set(['n01']) }));
    expect(plan.holders).toEqual([]);
    expect(plan.queue).toEqual([]);
  });

  it('gives held requests their reason: protocol off, drain backoff, reboot window closed', () => {
    const leases = [requestOf('n01', 1, 'reboot'), requestOf('n02', 2), requestOf('n03', 3)];
    const backoff = new Map([['n02', { untilMs: T0 + 200_000, message: 'drain failed' }]]);
    const closed = planSlots(
      input(leases, { backoff, policy: policy({ rebootWindow: { open: false, nextOpenMs: T0 + 150_000 } }) }),
    );
    expect(closed.queue.map((q) => [q.node, q.held?.reason])).toEqual([
      ['n01', 'OutsideMaintenanceWindow'],
      ['n02', 'DrainFailed'],
      ['n03', undefined],
    ]);
    expect(closed.nextChangeMs).toBe(T0 + 150_000);
    const off = planSlots(input(leases, { policy: policy({ protocols: new Set(['maintenance']) }) }));
    expect(off.queue[0]?.held?.reason).toBe('ProtocolDisabled');
  });

  it('does not queue a request that is done (waiting for its daemon to clear it)', () => {
    const done = { ...requestOf('n01', 1), done: { requestedAt: at(1), completedAt: at(5) } };
    expect(planSlots(input([done])).queue).toEqual([]);
  });
});
