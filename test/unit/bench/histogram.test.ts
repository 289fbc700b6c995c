/** Quantiles from Prometheus histogram buckets, as histogram_quantile estimates them. */
import { describe, expect, it } from '@jest/globals';
import { histogramDelta, histogramQuantile, parseHistogram } from '../../../bench/histogram.js';

const exposition = `# HELP controller_runtime_reconcile_time_seconds Time per reconcile
# TYPE controller_runtime_reconcile_time_seconds histogram
controller_runtime_reconcile_time_seconds_bucket{le="0.01",controller="skyhook"} 10
controller_runtime_reconcile_time_seconds_bucket{le="0.1",controller="skyhook"} 60
controller_runtime_reconcile_time_seconds_bucket{le="1",controller="skyhook"} 100
controller_runtime_reconcile_time_seconds_bucket{le="+Inf",controller="skyhook"} 100
controller_runtime_reconcile_time_seconds_sum{controller="skyhook"} 12
controller_runtime_reconcile_time_seconds_count{controller="skyhook"} 100
controller_runtime_reconcile_time_seconds_bucket{le="0.01",controller="nodeop"} 5
controller_runtime_reconcile_time_seconds_bucket{le="0.1",controller="nodeop"} 5
controller_runtime_reconcile_time_seconds_bucket{le="1",controller="nodeop"} 5
controller_runtime_reconcile_time_seconds_bucket{le="+Inf",controller="nodeop"} 9
`;
const metric = 'controller_runtime_reconcile_time_seconds';

describe('parseHistogram', () => {
  it('reads one controller’s cumulative buckets, in order of bound, whatever the label order', () => {
    expect(parseHistogram(exposition, metric, { controller: 'skyhook' })).toEqual([
      { le: 0.01, count: 10 },
      { le: 0.1, count: 60 },
      { le: 1, count: 100 },
      { le: Infinity, count: 100 },
    ]);
    expect(parseHistogram(exposition, metric, { controller: 'absent' })).toEqual([]);
  });
});

describe('histogramQuantile', () => {
  const skyhook = parseHistogram(exposition, metric, { controller: 'skyhook' });
  it('interpolates inside the bucket the rank falls into (from 0 in the first)', () => {
    expect(histogramQuantile(skyhook, 0.05)).toBeCloseTo(0.005);
    expect(histogramQuantile(skyhook, 0.5)).toBeCloseTo(0.01 + 0.09 * (40 / 50));
    expect(histogramQuantile(skyhook, 0.95)).toBeCloseTo(0.1 + 0.9 * (35 / 40));
    expect(histogramQuantile(skyhook, 1)).toBeCloseTo(1);
  });

  it('gives the highest finite bound for a rank in +Inf, and NaN without observations', () => {
    const nodeop = parseHistogram(exposition, metric, { controller: 'nodeop' });
    expect(histogramQuantile(nodeop, 0.95)).toBe(1);
    expect(histogramQuantile(nodeop, 0.5)).toBeCloseTo(0.01 * (4.5 / 5));
    expect(histogramQuantile([], 0.5)).toBeNaN();
    expect(histogramQuantile([{ le: 1, count: 0 }], 0.5)).toBeNaN();
  });

  it('works with any bucket layout, finer buckets sharpening the estimate', () => {
    const fine = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((ms, i) => ({ le: ms / 1000, count: (i + 1) * 10 }));
    expect(histogramQuantile(fine, 0.5)).toBeCloseTo(0.05);
    expect(histogramQuantile(fine, 0.95)).toBeCloseTo(0.095);
  });
});

describe('histogramDelta', () => {
  it('keeps only the observations between two readings', () => {
    const before = [
      { le: 0.1, count: 5 },
      { le: Infinity, count: 6 },
    ];
    const after = [
      { le: 0.1, count: 8 },
      { le: Infinity, count: 12 },
    ];
    expect(histogramDelta(before, after)).toEqual([
      { le: 0.1, count: 3 },
      { le: Infinity, count: 6 },
    ]);
    expect(histogramDelta([], after)).toEqual(after);
  });
});
