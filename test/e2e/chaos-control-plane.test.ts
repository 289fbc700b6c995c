/**
 * Chaos, short form: the API server restarted 3 times and etcd once during a 12-node reboot
 * rollout with budget 3; the operator, KWOK and the other components reconnect by themselves.
 */
import { describe, it } from '@jest/globals';
import { expectScenarioHolds } from './chaos-scenario.js';

describe('chaos: API server and etcd restarted mid-rollout', () => {
  it(
    'completes with no stage run twice, within budget, nodes left clean',
    async () => {
      await expectScenarioHolds('control-plane-restarts');
    },
    5 * 60_000,
  );
});
