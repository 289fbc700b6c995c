/** The rollout benchmarks' targets: judged at full size only, each against its measure. */
import { describe, expect, it } from '@jest/globals';
import { judgeTargets, type RolloutFigures, ROLLOUT_TARGETS } from '../../../bench/rollout-targets.js';

const figures: RolloutFigures = {
  completed: true,
  wallRatio: 1.4,
  skyhookReconcileP95Ms: 120,
  controlPlaneCpuPerNodeStageS: 0.1,
  operatorCpuPerNodeStageMs: 30,
  operatorPeakRssMb: 140,
  operatorWritesPerNodeStage: 9.5,
  operatorOwnWritesPerNodeStage: 7.5,
  clusterWritesPerNodeStage: 13,
  nextNodeP95Ms: 150,
};

describe('judgeTargets', () => {
  it('judges every target of rollout-1000 against its figure', () => {
    expect(judgeTargets('rollout-1000', figures, true).map((t) => [t.target, t.measured, t.met])).toEqual([
      ['completes without stalling', true, true],
      ['wall <= 1.5 x ideal', 1.4, true],
      ['Skyhook reconcile p95 <= 100 ms', 120, false],
      ['whole control-plane CPU <= 0.15 s per node-stage', 0.1, true],
      ['operator peak RSS <= 150 MB', 140, true],
      ['a freed budget slot refilled within 200 ms (p95)', 150, true],
    ]);
  });

  it('holds the issue’s 100-node figures for rollout-100', () => {
    expect(judgeTargets('rollout-100', figures, true).map((t) => [t.target, t.met])).toEqual([
      ['completes without stalling', true],
      ['wall <= 1.05 x ideal', false],
      ['operator CPU <= 40 ms per node-stage', true],
      ['operator peak RSS <= 120 MB', false],
      ['whole-cluster writes (heartbeats apart) <= 12 per node-stage', false],
      ["operator writes <= 8 per node-stage (running the Jobs' pods apart: pod creates and Job status)", true],
    ]);
  });

  it('fails a run that did not complete and judges nothing else of it (its figures are of part of the rollout)', () => {
    const stalled = judgeTargets('rollout-5000', { ...figures, completed: false, wallRatio: NaN }, true);
    expect(stalled.map((t) => t.met)).toEqual([false, 'not judged (not complete)', 'not judged (not complete)']);
  });

  it('fails a figure not measured (NaN)', () => {
    expect(judgeTargets('rollout-1000x5', { ...figures, wallRatio: NaN }, true).map((t) => t.met)).toEqual([
      true,
      false,
    ]);
  });

  it('does not judge a smaller run', () => {
    expect(judgeTargets('rollout-5000', figures, false).every((t) => t.met === 'not judged (smaller run)')).toBe(true);
  });

  it('has targets for every rollout benchmark', () => {
    expect(Object.keys(ROLLOUT_TARGETS).sort()).toEqual([
      'rollout-100',
      'rollout-1000',
      'rollout-1000-signed',
      'rollout-1000x5',
      'rollout-5000',
    ]);
  });

  it('holds the signed 1000-node rollout to the unsigned one’s targets', () => {
    expect(judgeTargets('rollout-1000-signed', figures, true)).toEqual(judgeTargets('rollout-1000', figures, true));
  });
});
