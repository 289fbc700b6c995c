import { describe, expect, it } from '@jest/globals';
import { DURATION_PATTERN } from '../../../src/api/schema-helpers.js';
import { parseDurationMs } from '../../../src/util/duration.js';

describe('parseDurationMs', () => {
  it('reads every form the CRDs accept (a form it cannot read was silently ignored)', () => {
    const accepted = new RegExp(DURATION_PATTERN);
    const cases: [string, number][] = [
      ['0', 0],
      ['46s', 46_000],
      ['1h30m', 5_400_000],
      ['1.5s', 1500],
      ['300ms', 300],
      ['500us', 0.5],
      ['2µs', 0.002],
      ['2μs', 0.002],
      ['10ns', 1e-5],
      ['.5s', 500],
      ['1.s', 1000],
      ['2m30.5s', 150_500],
    ];
    for (const [text, ms] of cases) {
      expect(accepted.test(text)).toBe(true);
      expect(parseDurationMs(text)).toBeCloseTo(ms, 9);
    }
  });

  it('refuses what is no duration', () => {
    for (const text of ['soon', '5d', '1h x', '-5m', 's'])
      expect(() => parseDurationMs(text)).toThrow('is not a duration');
  });
});
