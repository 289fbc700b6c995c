/**
 * The rules that turn a run's evidence into `N passed, N failed` (scripts/test-results.ts): every
 * kind of lost or crashed run counts as failed and is named; only a run with passing tests, no
 * failure and no skipped test is green.
 */
import { describe, expect, it } from '@jest/globals';
import { combine, judgeRun, render, rerunFiles, type RunEvidence } from '../../../scripts/test-results.js';

const A = '/repo/test/e2e/a.test.ts';
const B = '/repo/test/e2e/b.test.ts';

function evidence(extra: Partial<RunEvidence> = {}): RunEvidence {
  return {
    label: 'newest',
    suffix: '',
    exitCode: 0,
    listed: [A, B],
    attempts: [`10\t${A}`, `11\t${B}`],
    result: {
      numPassedTests: 5,
      numFailedTests: 0,
      testResults: [
        { name: A, status: 'passed', assertionResults: [{ status: 'passed', fullName: 'a works' }] },
        { name: B, status: 'passed', assertionResults: [{ status: 'passed', fullName: 'b works' }] },
      ],
    },
    ...extra,
  };
}

describe('judging one run', () => {
  it('calls a complete run green', () => {
    const { lines, ok } = render(judgeRun(evidence()));
    expect(lines).toEqual(['5 passed, 0 failed']);
    expect(ok).toBe(true);
  });

  it('fails a run that selected another number of files than it must', () => {
    const summary = judgeRun(evidence({ expectedFiles: 6 }));
    expect(summary.failures).toEqual([
      expect.objectContaining({
        name: 'newest: file selection',
        reason: expect.stringContaining('expected 6 test files, jest selected 2'),
      }),
    ]);
    expect(summary.failed).toBe(1);
  });

  it('fails a run that crashed before writing results, and every file it listed, by name', () => {
    const summary = judgeRun(evidence({ result: undefined, exitCode: null }));
    expect(summary.failures.map((f) => f.name)).toEqual(['newest: jest', A, B]);
    expect(summary.failed).toBe(3);
    expect(render(summary).ok).toBe(false);
  });

  it('fails a listed file that never reported', () => {
    const e = evidence();
    e.result!.testResults = e.result!.testResults!.slice(0, 1);
    expect(judgeRun(e).failures).toEqual([
      expect.objectContaining({ name: B, reason: expect.stringContaining('never reported') }),
    ]);
  });

  it('fails a file started twice in one run, though its last attempt passed', () => {
    const summary = judgeRun(evidence({ attempts: [`10\t${A}`, `12\t${A}`, `11\t${B}`] }));
    expect(summary.failures).toEqual([
      expect.objectContaining({ name: A, reason: expect.stringContaining('started 2 times') }),
    ]);
    expect(summary.failed).toBe(1);
  });

  it('counts a suite that failed to run once, and failed tests one by one', () => {
    const e = evidence({ exitCode: 1 });
    e.result!.numFailedTests = 2;
    e.result!.testResults = [
      { name: A, status: 'failed', message: 'Cannot find module', assertionResults: [] },
      { name: B, status: 'failed', assertionResults: [{ status: 'failed' }, { status: 'failed' }] },
    ];
    const summary = judgeRun(e);
    expect(summary.failed).toBe(3);
    expect(summary.failures.map((f) => f.name)).toEqual([A, B]);
  });

  it('fails a run that exited non-zero with nothing failed', () => {
    expect(judgeRun(evidence({ exitCode: 1 })).failures).toEqual([
      expect.objectContaining({ name: 'newest: jest', reason: 'exited with 1 with no failed test' }),
    ]);
  });

  it('names skipped tests and does not call the run green', () => {
    const e = evidence();
    e.result!.testResults![0]!.assertionResults!.push({ status: 'pending', fullName: 'a later' });
    e.result!.testResults![0]!.status = 'focused';
    const { lines, ok } = render(judgeRun(e));
    expect(lines).toEqual([`SKIPPED: ${A}: a later`, '5 passed, 0 failed, 1 skipped']);
    expect(ok).toBe(false);
  });

  it('never calls a run with no passed test green', () => {
    const e = evidence();
    e.result!.numPassedTests = 0;
    expect(render(judgeRun(e)).ok).toBe(false);
  });
});

describe('combining runs', () => {
  it('adds the oldest run under its own label, its suites marked with the release', () => {
    const oldest = evidence({ label: 'oldest', suffix: ' [Kubernetes v1.31.0]', result: undefined, exitCode: 1 });
    const summary = combine([judgeRun(evidence()), judgeRun(oldest)]);
    expect(summary.passed).toBe(5);
    expect(summary.failures.map((f) => f.name)).toEqual([
      'oldest: jest',
      `${A} [Kubernetes v1.31.0]`,
      `${B} [Kubernetes v1.31.0]`,
    ]);
    expect(render(summary).lines.at(-1)).toBe('5 passed, 3 failed');
  });
});

describe('re-run detection', () => {
  it('finds files started more than once', () => {
    expect([...rerunFiles([`1\t${A}`, `2\t${B}`, `3\t${A}`, '', `4\t${A}`])]).toEqual([[A, 3]]);
  });
});
