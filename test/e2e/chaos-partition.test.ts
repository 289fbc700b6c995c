/**
 * Chaos, short form: two operator replicas with leader election; the leader is cut off from the
 * API server for 30 s by a TCP proxy mid-rollout. The other takes the Lease and finishes; the
 * cut-off one exits and, restarted, stays a follower.
 */
import { describe, expect, it } from '@jest/globals';
import { expectScenarioHolds } from './chaos-scenario.js';

describe('chaos: the leader cut off from the API server for 30 s', () => {
  it(
    'fails over to the other replica, which completes the rollout; the old leader does not lead again',
    async () => {
      const result = await expectScenarioHolds('partition-and-lease');
      // An order, not a latency: the other replica held the Lease before the partition healed.
      expect(Number(result.notes['takeoverMs'])).toBeLessThan(Number(result.notes['cutMs']));
      expect(result.notes['firstExit']).not.toBe('0');
    },
    6 * 60_000,
  );
});
