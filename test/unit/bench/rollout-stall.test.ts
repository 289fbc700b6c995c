/** When a rollout benchmark gives up: only after `stallMs` without a stage Job finishing, however long the run. */
import { describe, expect, it } from '@jest/globals';
import { StallWatch } from '../../../bench/rollout-stall.js';

describe('StallWatch', () => {
  it('lets a slow run that keeps finishing stage Jobs go on, past any fixed time', () => {
    const watch = new StallWatch(120_000, 0);
    for (let t = 0; t <= 3_600_000; t += 60_000) expect(watch.check(t / 60_000, t)).toBeUndefined();
  });

  it('says stalled once no stage Job finished for stallMs, naming how long and how many', () => {
    const watch = new StallWatch(120_000, 0);
    expect(watch.check(10, 5000)).toBeUndefined();
    expect(watch.check(10, 124_999)).toBeUndefined();
    expect(watch.check(10, 125_000)).toBe('stalled: no stage Job finished for 120 s (10 done)');
  });

  it('counts the quiet time from the last change, not from the start', () => {
    const watch = new StallWatch(120_000, 0);
    expect(watch.check(0, 100_000)).toBeUndefined();
    expect(watch.check(1, 200_000)).toBeUndefined();
    expect(watch.check(1, 310_000)).toBeUndefined();
    expect(watch.check(1, 320_000)).toMatch(/^stalled: no stage Job finished for 120 s/);
  });

  it('counts a run that never starts a stage from the start', () => {
    const watch = new StallWatch(60_000, 1000);
    expect(watch.check(0, 30_000)).toBeUndefined();
    expect(watch.check(0, 61_000)).toBe('stalled: no stage Job finished for 60 s (0 done)');
  });
});
