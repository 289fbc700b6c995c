/**
 * The real-node lane's timing lines `npm test` prints (scripts/lane-times.ts): only the lane's
 * files, each with its own duration, slowest first, and their sum.
 */
import { describe, expect, it } from '@jest/globals';
import { laneTimeLines } from '../../../scripts/lane-times.js';

const lane = (path: string): boolean => /\/real-[^/]*\.test\.ts$/.test(path);

describe('the real-node lane timing lines', () => {
  it("names each lane file's duration, slowest first, and the total; other files are left out", () => {
    const lines = laneTimeLines(
      [
        { name: '/repo/test/e2e/real-a.test.ts', status: 'passed', startTime: 1_000, endTime: 31_500 },
        { name: '/repo/test/e2e/other.test.ts', status: 'passed', startTime: 0, endTime: 900_000 },
        { name: '/repo/test/e2e/real-b.test.ts', status: 'failed', startTime: 40_000, endTime: 160_000 },
      ],
      lane,
      '/repo',
    );
    expect(lines).toEqual([
      'real-node lane (one file at a time): 2 file(s), 150.5 s in all',
      '  test/e2e/real-b.test.ts   120.0 s  failed',
      '  test/e2e/real-a.test.ts    30.5 s  passed',
    ]);
  });

  it('says nothing when the run had no lane file, or jest recorded no times for it', () => {
    expect(laneTimeLines([{ name: '/repo/test/e2e/other.test.ts', status: 'passed' }], lane, '/repo')).toEqual([]);
    expect(laneTimeLines([{ name: '/repo/test/e2e/real-a.test.ts', status: 'failed' }], lane, '/repo')).toEqual([]);
  });
});
