/**
 * A DisruptionBudget's maintenance windows bind every actor that asks the arbiter (NodeOps, maintenance
 * slots, Skyhook interrupts), and a NodeOp's reboot without a cordon counts against its budgets.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import type { DisruptionBudget } from '../../../../src/api/disruption-budget.js';
import { NODEOP_NAMES } from '../../../../src/api/names.js';
import { OUTSIDE_WINDOW } from '../../../../src/controllers/disruption/arbiter.js';
import { ClusterDisruptionArbiter } from '../../../../src/controllers/disruption/cluster-arbiter.js';
import { isDisrupted } from '../../../../src/jobs/cordon/claims.js';
import { budget } from './budgets.js';

// Wednesday 2026-01-07 10:00 UTC.
const WEDNESDAY_10 = Date.UTC(2026, 0, 7, 10, 0, 0);
const weekendNights = budget('weekends', {
  maxDisrupted: { count: 2 },
  maintenanceWindows: [{ days: ['sat', 'sun'], start: '01:00', end: '05:00' }],
});

function arbiterOver(budgets: DisruptionBudget[], nodes: V1Node[], now: number) {
  return new ClusterDisruptionArbiter({ nodes: () => nodes, budgets: () => budgets, now: () => now });
}
const node = (name: string, annotations: Record<string, string> = {}, unschedulable = false): V1Node => ({
  metadata: { name, labels: {}, annotations },
  spec: { unschedulable },
});

describe("a DisruptionBudget's maintenance windows at the arbiter", () => {
  it('refuse a node newly disrupted outside them, for every holder, naming the reason and the next opening', () => {
    const arbiter = arbiterOver([weekendNights], [node('a')], WEDNESDAY_10);
    for (const holder of ['nodeop/ns/op', 'maintenance/p', 'skyhook/s']) {
      const decision = arbiter.tryAcquire('a', holder);
      expect(decision).toMatchObject({ granted: false, budget: 'weekends', code: OUTSIDE_WINDOW });
      if (decision.granted) throw new Error('unreachable');
      expect(decision.nextOpen).toBe(Date.UTC(2026, 0, 10, 1, 0, 0));
      expect(decision.reason).toMatch(/^OutsideMaintenanceWindow: .*next opens 2026-01-10T01:00:00Z$/);
    }
  });

  it('grant inside them, and let a node already disrupted finish outside them', () => {
    const saturday = Date.UTC(2026, 0, 10, 2, 0, 0);
    expect(arbiterOver([weekendNights], [node('a')], saturday).tryAcquire('a', 'nodeop/ns/op').granted).toBe(true);
    const cordoned = node('a', { [NODEOP_NAMES.cordonedBy]: 'ns/op@u' }, true);
    expect(arbiterOver([weekendNights], [cordoned], WEDNESDAY_10).tryAcquire('a', 'nodeop/ns/op').granted).toBe(true);
  });

  it('bind only the nodes the budget covers', () => {
    const gpu = budget('gpu', { ...weekendNights.spec, nodeSelector: { matchLabels: { gpu: 'true' } } });
    expect(arbiterOver([gpu], [node('a')], WEDNESDAY_10).tryAcquire('a', 'nodeop/ns/op').granted).toBe(true);
  });
});

describe('a NodeOp rebooting a node without cordoning it', () => {
  it('makes the node count as disrupted, cordoned or not', () => {
    expect(isDisrupted({ annotations: { [NODEOP_NAMES.rebootingBy]: 'ns/op@u' } })).toBe(true);
    expect(isDisrupted({ annotations: {} })).toBe(false);
  });

  it('uses a slot of every budget covering the node', () => {
    const one = budget('one', { maxDisrupted: { count: 1 } });
    const nodes = [node('a', { [NODEOP_NAMES.rebootingBy]: 'ns/op@u' }), node('b')];
    expect(arbiterOver([one], nodes, WEDNESDAY_10).tryAcquire('b', 'skyhook/s')).toMatchObject({
      granted: false,
      budget: 'one',
    });
  });

  it('holds its slot until the mark shows in the cache', () => {
    const one = budget('one', { maxDisrupted: { count: 1 } });
    const nodes = [node('a'), node('b')];
    const arbiter = arbiterOver([one], nodes, WEDNESDAY_10);
    expect(arbiter.tryAcquire('a', 'nodeop/ns/op', NODEOP_NAMES.rebootingBy).granted).toBe(true);
    expect(arbiter.tryAcquire('b', 'maintenance/p').granted).toBe(false);
  });
});
