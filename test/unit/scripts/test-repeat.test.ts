/** The flake meter's arguments and report (scripts/test-repeat.ts). */
import { describe, expect, it } from '@jest/globals';
import { formatRepeat, parseRepeatArgs } from '../../../scripts/test-repeat.js';

describe('test:repeat', () => {
  it('reads files, --runs and --hog', () => {
    expect(parseRepeatArgs(['a.test.ts', '--runs', '5', 'b.test.ts', '--hog'])).toEqual({
      files: ['a.test.ts', 'b.test.ts'],
      runs: 5,
      hog: true,
    });
    expect(parseRepeatArgs(['a.test.ts', '--runs=2']).runs).toBe(2);
  });

  it('refuses a bad run count, an unknown option and no files, saying what to pass', () => {
    expect(() => parseRepeatArgs(['a.test.ts', '--runs', 'x'])).toThrow(/--runs needs a whole number/);
    expect(() => parseRepeatArgs(['a.test.ts', '--run', '3'])).toThrow(/unknown option --run/);
    expect(() => parseRepeatArgs(['--hog'])).toThrow(/name the test files/);
  });

  it('prints passes out of runs, min, median and max seconds, and each failed run with its reason', () => {
    const lines = formatRepeat([
      {
        file: 'test/e2e/x.test.ts',
        outcomes: [
          { ok: true, seconds: 30, why: '' },
          { ok: false, seconds: 90, why: 'FAILED: x timed out' },
          { ok: true, seconds: 40, why: '' },
        ],
      },
    ]);
    expect(lines[1]).toMatch(/^test\/e2e\/x\.test\.ts\s+2\/3\s+30\.0\s+40\.0\s+90\.0$/);
    expect(lines[2]).toBe('  run 2 failed: FAILED: x timed out');
  });
});
