/** The machine's floor under a rollout's wall time: CPU per node-stage x node-stages / cores. */
import { describe, expect, it } from '@jest/globals';
import { machineFloor } from '../../../bench/machine-floor.js';

/** A run on the 2-core machine: CPU spent, node-stages done of all, and the ideal in seconds. */
const floorOf = (cpuSeconds: number, nodeStagesDone: number, nodeStagesTotal: number, idealS: number) =>
  machineFloor({ cpuSeconds, nodeStagesDone, nodeStagesTotal, cores: 2, idealMs: idealS * 1000 });

describe('machineFloor', () => {
  it('spreads the whole rollout CPU over the cores and compares it with the ideal', () => {
    // rollout-1000 of 2026-11-23: 371 s of control plane + operator CPU for 2000 node-stages, 2 cores.
    const floor = floorOf(371, 2000, 2000, 100);
    expect(floor?.cpuPerNodeStageS).toBe(0.186);
    expect(floor?.floorS).toBe(185.5);
    expect(floor?.floorRatio).toBe(1.86);
    expect(floor?.cpuPerNodeStageForIdealS).toBe(0.1);
    expect(floor?.explained).toContain('needs <= 0.1 CPU s per node-stage');
  });

  it('extrapolates an incomplete run to every node-stage of the rollout', () => {
    const floor = floorOf(920, 3454, 10_000, 140);
    expect(floor?.floorS).toBeCloseTo((920 / 3454) * 5000, 0);
    expect(floor?.floorRatio).toBeGreaterThan(9);
  });

  it('says when the machine can keep up with the ideal', () => {
    const floor = floorOf(48, 200, 200, 100);
    expect(floor?.floorRatio).toBe(0.24);
    expect(floor?.explained).toContain('can keep up');
  });

  it('has no floor before a node-stage finished', () => {
    expect(floorOf(10, 0, 200, 100)).toBeUndefined();
  });
});
