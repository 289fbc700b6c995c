/** Benchmark clusters' heartbeats: Kubernetes' defaults up to 1000 nodes, scaled with the node count beyond. */
import { describe, expect, it } from '@jest/globals';
import { benchHeartbeat } from '../../../bench/bench-heartbeat.js';

describe('benchHeartbeat', () => {
  it("keeps Kubernetes' defaults up to 1000 nodes", () => {
    for (const nodes of [1, 100, 1000])
      expect(benchHeartbeat(nodes)).toEqual({ leaseDurationSeconds: 40, nodeMonitorGracePeriodSeconds: 50 });
  });

  it('scales leases and grace with the node count beyond, so Lease renewals per second stay those of 1000 nodes', () => {
    const heartbeat = benchHeartbeat(5000);
    expect(heartbeat).toEqual({ leaseDurationSeconds: 200, nodeMonitorGracePeriodSeconds: 250 });
    // Renewals per second (a quarter of the lease between renewals): the same as 1000 nodes at the defaults.
    expect(5000 / (heartbeat.leaseDurationSeconds / 4)).toBeCloseTo(1000 / (40 / 4));
    // The grace stays above the lease, as Kubernetes' defaults have it.
    expect(heartbeat.nodeMonitorGracePeriodSeconds).toBeGreaterThan(heartbeat.leaseDurationSeconds);
  });
});
