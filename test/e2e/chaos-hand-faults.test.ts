/**
 * Chaos, short form: by hand, mid-stage, on six nodes of a 14-node reboot rollout with budget 3: a
 * stage Job, a stage NodeOp and a reboot pod deleted, a held node uncordoned, a node deleted, a
 * nodeState annotation corrupted. Only the destroyed stages run again; the deleted node is dropped.
 */
import { describe, expect, it } from '@jest/globals';
import { expectScenarioHolds } from './chaos-scenario.js';

describe('chaos: hand-made faults mid-stage', () => {
  it(
    'completes the other nodes, re-runs only the destroyed stages, within budget, nodes left clean',
    async () => {
      const result = await expectScenarioHolds('hand-faults');
      expect(result.completeNodes).toBe('13/13');
    },
    6 * 60_000,
  );
});
