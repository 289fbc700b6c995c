/** The reconcile figures of a rollout benchmark: from the growth of the operator's histogram over the run. */
import { describe, expect, it } from '@jest/globals';
import { reconcileQuantiles, skyhookPhaseQuantiles } from '../../../bench/rollout-report.js';

const exposition = (fast: number, slow: number, sum: number): string =>
  [
    `controller_runtime_reconcile_time_seconds_bucket{controller="skyhook",le="0.01"} ${fast}`,
    `controller_runtime_reconcile_time_seconds_bucket{controller="skyhook",le="10"} ${fast + slow}`,
    `controller_runtime_reconcile_time_seconds_bucket{controller="skyhook",le="+Inf"} ${fast + slow}`,
    `controller_runtime_reconcile_time_seconds_sum{controller="skyhook"} ${sum}`,
    `controller_runtime_reconcile_time_seconds_count{controller="skyhook"} ${fast + slow}`,
  ].join('\n');

describe('reconcileQuantiles', () => {
  it('counts only the run, and shows the few long reconciles in p99 and the mean', () => {
    // Before: 10 fast. During: 97 fast, 3 slow of about 5 s each (15.2 s in all).
    const figures = reconcileQuantiles(exposition(10, 0, 0.05), exposition(107, 3, 15.25), 'skyhook');
    expect(figures.count).toBe(100);
    expect(figures.p50Ms).toBe(5);
    expect(figures.p95Ms).toBe(10);
    expect(figures.p99Ms).toBe(Math.round(1000 * (0.01 + 9.99 * (2 / 3))));
    expect(figures.meanMs).toBe(152);
  });

  it('is NaN without reconciles', () => {
    expect(reconcileQuantiles('', '', 'skyhook').meanMs).toBeNaN();
  });
});

describe('skyhookPhaseQuantiles', () => {
  const phase = (name: string, fast: number, slow: number, sum: number): string[] => [
    `skyhook_reconcile_phase_seconds_bucket{le="0.01",phase="${name}"} ${fast}`,
    `skyhook_reconcile_phase_seconds_bucket{le="1",phase="${name}"} ${fast + slow}`,
    `skyhook_reconcile_phase_seconds_bucket{le="+Inf",phase="${name}"} ${fast + slow}`,
    `skyhook_reconcile_phase_seconds_sum{phase="${name}"} ${sum}`,
    `skyhook_reconcile_phase_seconds_count{phase="${name}"} ${fast + slow}`,
  ];

  it('tells the plan from the apply, each from its own series', () => {
    const after = [...phase('plan', 20, 0, 0.1), ...phase('apply', 0, 20, 12), ...phase('cleanup', 20, 0, 0)].join(
      '\n',
    );
    const figures = skyhookPhaseQuantiles('', after);
    expect(figures['plan']).toMatchObject({ count: 20, p50Ms: 5, p95Ms: 10, meanMs: 5 });
    expect(figures['apply']).toMatchObject({ count: 20, p50Ms: 505, meanMs: 600 });
    expect(figures['cleanup']?.count).toBe(20);
  });
});
