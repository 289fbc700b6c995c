import { describe, expect, it } from '@jest/globals';
import { NODEOP_NAMES, nodeAnnotations, RUNTIME_REQUIRED_CORDON_ANNOTATION } from '../../../../src/api/names.js';
import { maintenanceClaim } from '../../../../src/jobs/cordon/claims.js';
import { type BudgetNode, budgetLimit, DisruptionLedger } from '../../../../src/controllers/disruption/budget-rules.js';
import { budget } from './budgets.js';

function node(name: string, extra: Partial<BudgetNode> = {}): BudgetNode {
  return { name, labels: {}, annotations: {}, ...extra };
}

const cordoned = (name: string, annotations: Record<string, string>, labels: Record<string, string> = {}) =>
  node(name, { unschedulable: true, annotations, labels });

describe('budgetLimit', () => {
  it.each([
    [{ count: 2 }, 10, 2],
    [{ count: 5 }, 3, 5],
    [{ percent: 25 }, 10, 2],
    [{ percent: 10 }, 5, 1],
    [{ percent: 100 }, 7, 7],
    [{ percent: 50 }, 0, 1],
  ])('%j of %i nodes allows %i', (max, matched, expected) => {
    expect(budgetLimit(max, matched)).toBe(expected);
  });
});

describe('DisruptionLedger', () => {
  it('counts what isDisrupted counts: SCR, maintenance and NodeOp cordons; not a person nor the runtime-required cordon', () => {
    const nodes = [
      cordoned('scr', { [nodeAnnotations.cordon('a')]: 'true' }),
      cordoned('maint', { [maintenanceClaim('p')]: 'true' }),
      cordoned('op', { [NODEOP_NAMES.cordonedBy]: 'ns/op@uid' }),
      cordoned('person', {}),
      cordoned('new', { [RUNTIME_REQUIRED_CORDON_ANNOTATION]: 'true' }),
      node('claim-left', { annotations: { [nodeAnnotations.cordon('a')]: 'true' } }),
      node('free'),
    ];
    const ledger = new DisruptionLedger([budget('all', { maxDisrupted: { count: 10 } })], nodes);
    expect([...ledger.usage()[0]!.disrupted].sort()).toEqual(['maint', 'op', 'scr']);
  });

  it('refuses a new node once a covering budget is full, naming it; a disrupted node is always granted', () => {
    const nodes = [cordoned('a', { [nodeAnnotations.cordon('s')]: 'true' }), node('b'), node('c')];
    const ledger = new DisruptionLedger([budget('one', { maxDisrupted: { count: 1 } })], nodes);
    expect(ledger.decide('a')).toEqual({ granted: true });
    const refused = ledger.decide('b');
    expect(refused).toMatchObject({ granted: false, budget: 'one' });
    if (!refused.granted) expect(refused.reason).toContain('DisruptionBudget one allows 1 of 3 node(s)');
  });

  it('takes slots as it grants, and only the budgets that cover the node', () => {
    const gpu = { gpu: 'yes' };
    const nodes = [node('g1', { labels: gpu }), node('g2', { labels: gpu }), node('c1'), node('c2')];
    const ledger = new DisruptionLedger(
      [
        budget('gpu', { nodeSelector: { matchLabels: gpu }, maxDisrupted: { count: 1 } }),
        budget('all', { maxDisrupted: { percent: 75 } }),
      ],
      nodes,
    );
    expect(ledger.take('g1').granted).toBe(true);
    expect(ledger.take('g2')).toMatchObject({ granted: false, budget: 'gpu' });
    expect(ledger.take('c1').granted).toBe(true);
    // 75% of 4 = 3: g1, c1 and one more.
    expect(ledger.take('c2').granted).toBe(true);
    expect(ledger.take('g1').granted).toBe(true);
    expect(ledger.usage().map((u) => u.disrupted.size)).toEqual([1, 3]);
  });

  it('all covering budgets must allow', () => {
    const nodes = [
      cordoned('x', { [nodeAnnotations.cordon('s')]: 'true' }, { zone: 'a' }),
      node('y', { labels: { zone: 'a' } }),
    ];
    const ledger = new DisruptionLedger(
      [
        budget('wide', { maxDisrupted: { count: 5 } }),
        budget('zone', { nodeSelector: { matchLabels: { zone: 'a' } }, maxDisrupted: { count: 1 } }),
      ],
      nodes,
    );
    expect(ledger.decide('y')).toMatchObject({ granted: false, budget: 'zone' });
  });

  it('counts granted reservations the snapshot does not show yet', () => {
    const ledger = new DisruptionLedger([budget('one', { maxDisrupted: { count: 1 } })], [node('a'), node('b')], ['a']);
    expect(ledger.isDisrupted('a')).toBe(true);
    expect(ledger.decide('b').granted).toBe(false);
  });

  it('grants everything without budgets', () => {
    const ledger = new DisruptionLedger([], [node('a')]);
    expect(ledger.empty).toBe(true);
    expect(ledger.take('a')).toEqual({ granted: true });
  });
});
