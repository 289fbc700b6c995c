/**
 * Chaos, short form: the operator process SIGKILLed 8 times at random moments of a 12-node reboot
 * rollout with budget 3 (`npm run chaos -- operator-kills` does 50 on 100 nodes).
 */
import { describe, it } from '@jest/globals';
import { expectScenarioHolds } from './chaos-scenario.js';

describe('chaos: operator killed mid-rollout', () => {
  it(
    'completes with no stage run twice, within budget, nodes left clean',
    async () => {
      await expectScenarioHolds('operator-kills');
    },
    5 * 60_000,
  );
});
