import { describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import { nodeAnnotations } from '../../../../src/api/names.js';
import { DisruptionLedger } from '../../../../src/controllers/disruption/budget-rules.js';
import { budgetStatus, plannerWaits } from '../../../../src/controllers/disruption/budget-status.js';
import { budgetNodeOf } from '../../../../src/controllers/disruption/cluster-arbiter.js';
import { budget } from './budgets.js';

const NOW = Date.parse('2026-11-24T10:00:00Z');

function v1Node(name: string, annotations: Record<string, string> = {}, unschedulable = false): V1Node {
  return { metadata: { name, labels: {}, annotations }, spec: { unschedulable } };
}

const waitingFor = (budgetName: string) =>
  `ClusterBudget: DisruptionBudget ${budgetName} allows 1 of 3 node(s) disrupted at once; disrupted: a`;

describe('the DisruptionBudget status', () => {
  const nodes = [
    v1Node('a', { [nodeAnnotations.cordon('s')]: 'true' }, true),
    v1Node('b', { [nodeAnnotations.waiting('t')]: waitingFor('one') }),
    v1Node('c', { [nodeAnnotations.waiting('t')]: waitingFor('other') }),
  ];
  const one = budget('one', { maxDisrupted: { count: 1 } });
  const usage = new DisruptionLedger([one], nodes.map(budgetNodeOf)).usage()[0];

  it("reads the planner's waits for this budget from the nodes' waiting_<scr> annotations", () => {
    expect(plannerWaits('one', nodes)).toEqual([{ node: 'b', holder: 'skyhook/t' }]);
  });

  it('reports matched, the limit, the disrupted nodes, who waits (arbiter refusals and planner holds) and a condition', () => {
    const status = budgetStatus({
      budget: { ...one, metadata: { name: 'one', generation: 2 } },
      usage,
      refusals: [
        { node: 'c', holder: 'nodeop/ns/op', budget: 'one', reason: 'full', sinceMs: NOW - 60_000, lastMs: NOW },
        { node: 'b', holder: 'nodeop/ns/x', budget: 'other', reason: 'full', sinceMs: NOW, lastMs: NOW },
      ],
      nodes,
      now: NOW,
    });
    expect(status).toEqual({
      observedGeneration: 2,
      matched: 3,
      maxDisrupted: 1,
      disrupted: ['a'],
      disruptedCount: 1,
      waiting: [
        { node: 'c', holder: 'nodeop/ns/op', since: '2026-11-24T09:59:00.000Z' },
        { node: 'b', holder: 'skyhook/t', since: '2026-11-24T10:00:00.000Z' },
      ],
      waitingCount: 2,
      conditions: [
        {
          type: 'SlotsAvailable',
          status: 'False',
          reason: 'BudgetFull',
          message: '1 of 1 node(s) disrupted (3 matched)',
          lastTransitionTime: '2026-11-24T10:00:00.000Z',
          observedGeneration: 2,
        },
      ],
    });
  });

  it('keeps the since of a wait and the transition time of an unchanged condition (a restart resets neither)', () => {
    const first = budgetStatus({ budget: one, usage, refusals: [], nodes, now: NOW });
    const later = budgetStatus({ budget: { ...one, status: first }, usage, refusals: [], nodes, now: NOW + 600_000 });
    expect(later).toEqual(first);
  });
});
