/** The rollout benchmarks' ideal: the batch formula for one SCR, the pipeline for several. */
import { describe, expect, it } from '@jest/globals';
import { idealExplained, idealRolloutMs } from '../../../bench/rollout-ideal.js';

const scrs = (count: number, budget: number, stages = 2): { budget: number; stages: number }[] =>
  Array.from({ length: count }, () => ({ budget, stages }));

describe('idealRolloutMs', () => {
  it('is ceil(nodes / budget) x stages x stage time for one SCR', () => {
    expect(idealRolloutMs({ nodes: 1000, scrs: scrs(1, 100), stageMs: 5000 })).toBe(100_000);
    expect(idealRolloutMs({ nodes: 100, scrs: scrs(1, 10), stageMs: 5000 })).toBe(100_000);
    expect(idealRolloutMs({ nodes: 5000, scrs: scrs(1, 500), stageMs: 5000 })).toBe(100_000);
    expect(idealRolloutMs({ nodes: 101, scrs: scrs(1, 10), stageMs: 5000 })).toBe(110_000);
  });

  it('pipelines several SCRs: (batches + SCRs - 1) x stages x stage time', () => {
    expect(idealRolloutMs({ nodes: 1000, scrs: scrs(5, 100), stageMs: 5000 })).toBe(140_000);
    expect(idealRolloutMs({ nodes: 20, scrs: scrs(3, 5), stageMs: 5000 })).toBe((4 + 3 - 1) * 10_000);
  });

  it('is at least every lower bound: the last SCR waits for the earlier ones, then runs its batches', () => {
    for (const [nodes, budget, count] of [
      [7, 3, 2],
      [10, 10, 4],
      [1, 1, 5],
      [99, 7, 3],
    ] as const) {
      const ms = idealRolloutMs({ nodes, scrs: scrs(count, budget, 1), stageMs: 1 });
      expect(ms).toBe(Math.ceil(nodes / budget) + count - 1);
    }
  });

  it('follows the slowest SCR when budgets differ', () => {
    // A budget of 1 in the second SCR: its 4 nodes run one after another, the first after SCR 1's first batch.
    expect(
      idealRolloutMs({
        nodes: 4,
        scrs: [
          { budget: 4, stages: 1 },
          { budget: 1, stages: 1 },
        ],
        stageMs: 1,
      }),
    ).toBe(5);
  });

  it('is 0 without nodes or SCRs and refuses a budget below 1', () => {
    expect(idealRolloutMs({ nodes: 0, scrs: scrs(1, 1), stageMs: 5 })).toBe(0);
    expect(idealRolloutMs({ nodes: 5, scrs: [], stageMs: 5 })).toBe(0);
    expect(() => idealRolloutMs({ nodes: 5, scrs: scrs(1, 0), stageMs: 5 })).toThrow(/budget/);
  });
});

describe('idealExplained', () => {
  it('shows the formula with the numbers', () => {
    expect(idealExplained({ nodes: 1000, scrs: scrs(1, 100), stageMs: 5000 })).toBe(
      'ceil(1000 nodes / budget 100) x 2 stages x 5 s = 100 s',
    );
    expect(idealExplained({ nodes: 1000, scrs: scrs(5, 100), stageMs: 5000 })).toMatch(
      /^pipelined: \(ceil\(1000 nodes \/ budget 100\) \+ 5 SCRs - 1\) x 2 stages x 5 s = 140 s \(a node works on one SCR at a time in priority order/,
    );
  });
});
