/** The machine's floor under a rollout's wall time: CPU per node-stage x node-stages / cores. */
import { describe, expect, it } from '@jest/globals';
import { machineFloor } from '../../../bench/machine-floor.js';

describe('machineFloor', () => {
  it('spreads the whole rollout CPU over the cores and compares it with the ideal', () => {
    // rollout-1000 of 2026-11-23: 371 s of control plane + operator CPU for 2000 node-stages, 2 cores.
    const floor = machineFloor({
      cpuSeconds: 371,
      nodeStagesDone: 2000,
      nodeStagesTotal: 2000,
      cores: 2,
      idealMs: 100_000,
    });
    expect(floor?.cpuPerNodeStageS).toBe(0.186);
    expect(floor?.floorS).toBe(185.5);
    expect(floor?.floorRatio).toBe(1.86);
    expect(floor?.cpuPerNodeStageForIdealS).toBe(0.1);
    expect(floor?.explained).toContain('needs <= 0.1 CPU s per node-stage');
  });

  it('extrapolates an incomplete run to every node-stage of the rollout', () => {
    const floor = machineFloor({
      cpuSeconds: 920,
      nodeStagesDone: 3454,
      nodeStagesTotal: 10_000,
      cores: 2,
      idealMs: 140_000,
    });
    expect(floor?.floorS).toBeCloseTo((920 / 3454) * 5000, 0);
    expect(floor?.floorRatio).toBeGreaterThan(9);
  });

  it('says when the machine can keep up with the ideal', () => {
    const floor = machineFloor({
      cpuSeconds: 48,
      nodeStagesDone: 200,
      nodeStagesTotal: 200,
      cores: 2,
      idealMs: 100_000,
    });
    expect(floor?.floorRatio).toBe(0.24);
    expect(floor?.explained).toContain('can keep up');
  });

  it('has no floor before a node-stage finished', () => {
    expect(
      machineFloor({ cpuSeconds: 10, nodeStagesDone: 0, nodeStagesTotal: 200, cores: 2, idealMs: 1 }),
    ).toBeUndefined();
  });
});
