/**
 * What a test run's outcome is, from the evidence each jest process leaves: its exit code, its JSON
 * result file (or the lack of one), the files `jest --listTests` said it would run, and the attempts
 * log the test environment writes (scripts/jest-environment.cjs: one line per test file start).
 * Pure functions, so the rules that decide "N passed, N failed" are unit-tested
 * (test/unit/scripts/test-results.test.ts) without starting jest.
 *
 * The rules: a listed file with no result is failed (the run crashed or lost it); a run that exits
 * non-zero without a result file is failed by name; a file started more than once in one run was
 * re-run by jest after its worker exited, so it failed however the last attempt went; a run that
 * expected a fixed number of files and listed another number is failed; skipped tests are named.
 */

/** The part of jest's `--json` output this module reads. */
export interface JestAssertion {
  fullName?: string;
  title?: string;
  status: string;
}
export interface JestSuite {
  name: string;
  status: string;
  message?: string;
  assertionResults?: JestAssertion[];
  /** When jest started and finished the file (ms since the epoch). */
  startTime?: number;
  endTime?: number;
}
export interface JestResult {
  numPassedTests?: number;
  numFailedTests?: number;
  numPendingTests?: number;
  numTodoTests?: number;
  numRuntimeErrorTestSuites?: number;
  success?: boolean;
  testResults?: JestSuite[];
}

/** One jest process of the run. */
export interface RunEvidence {
  /** How the summary names the run, e.g. "newest Kubernetes". */
  label: string;
  /** Appended to each suite name of this run (e.g. " [Kubernetes v1.31.0]"); empty for none. */
  suffix: string;
  /** The process's exit code (null: killed by a signal). */
  exitCode: number | null;
  /** The parsed result file; undefined when the run wrote none. */
  result: JestResult | undefined;
  /** Absolute paths jest listed for this run before it started. */
  listed: string[];
  /** When set, the run must list exactly this many files (the smoke subset). */
  expectedFiles?: number;
  /** Set when jest could not even list the run's files. */
  listError?: string;
  /** Lines of the attempts log written during this run: `<pid>\t<absolute test path>`. */
  attempts: string[];
}

export interface Failure {
  name: string;
  reason: string;
}

export interface Summary {
  passed: number;
  failed: number;
  failures: Failure[];
  skipped: string[];
}

/** Test files started more than once within one run, with their attempt counts. */
export function rerunFiles(attempts: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of attempts) {
    const file = line.split('\t')[1]?.trim();
    if (file) counts.set(file, (counts.get(file) ?? 0) + 1);
  }
  return new Map([...counts].filter(([, n]) => n > 1));
}

function suiteFailures(run: RunEvidence, result: JestResult): Failure[] {
  const failures: Failure[] = [];
  for (const suite of result.testResults ?? []) {
    // jest's statuses: passed, failed, and `focused` for a suite with skipped tests (named below).
    if (suite.status !== 'failed') continue;
    failures.push({ name: `${suite.name}${run.suffix}`, reason: (suite.message ?? suite.status).slice(0, 4000) });
  }
  return failures;
}

/** The evidence of one run, judged. */
export function judgeRun(run: RunEvidence): Summary {
  const result = run.result;
  const failures: Failure[] = [];
  const skipped: string[] = [];
  let passed = 0;
  let failedTests = 0;
  if (run.listError) failures.push({ name: `${run.label}: file selection`, reason: run.listError });
  else if (run.expectedFiles !== undefined && run.listed.length !== run.expectedFiles) {
    failures.push({
      name: `${run.label}: file selection`,
      reason: `expected ${run.expectedFiles} test files, jest selected ${run.listed.length}; check testMatch and rootDir in its config`,
    });
  }
  if (!result) {
    failures.push({
      name: `${run.label}: jest`,
      reason: `exited with ${run.exitCode ?? 'a signal'} and wrote no result file`,
    });
  } else {
    passed = result.numPassedTests ?? 0;
    failedTests = result.numFailedTests ?? 0;
    failures.push(...suiteFailures(run, result));
    for (const suite of result.testResults ?? []) {
      for (const test of suite.assertionResults ?? []) {
        if (test.status === 'pending' || test.status === 'todo' || test.status === 'skipped')
          skipped.push(`${suite.name}${run.suffix}: ${test.fullName ?? test.title ?? '(unnamed)'}`);
      }
    }
    if (run.exitCode !== 0 && failures.length === 0 && failedTests === 0) {
      failures.push({
        name: `${run.label}: jest`,
        reason: `exited with ${run.exitCode ?? 'a signal'} with no failed test`,
      });
    }
  }
  const reported = new Set((result?.testResults ?? []).map((s) => s.name));
  for (const file of run.listed) {
    if (!reported.has(file))
      failures.push({ name: `${file}${run.suffix}`, reason: `listed for ${run.label} but never reported a result` });
  }
  for (const [file, count] of rerunFiles(run.attempts)) {
    failures.push({
      name: `${file}${run.suffix}`,
      reason: `started ${count} times: jest re-ran it after its worker exited; the first attempt crashed`,
    });
  }
  // A failed suite counts once per failed test it reported, and at least once.
  const failedSuites = new Set(failures.map((f) => f.name));
  return {
    passed,
    failed: Math.max(failedTests, 0) + countUncovered(result, failedSuites, run.suffix),
    failures,
    skipped,
  };
}

/** Failures not already counted as failed tests: crashed or unrun suites, runs, selections. */
function countUncovered(result: JestResult | undefined, failedNames: Set<string>, suffix: string): number {
  const withFailedTests = new Set(
    (result?.testResults ?? [])
      .filter((s) => (s.assertionResults ?? []).some((a) => a.status === 'failed'))
      .map((s) => `${s.name}${suffix}`),
  );
  return [...failedNames].filter((name) => !withFailedTests.has(name)).length;
}

export function combine(summaries: Summary[]): Summary {
  return {
    passed: summaries.reduce((n, s) => n + s.passed, 0),
    failed: summaries.reduce((n, s) => n + s.failed, 0),
    failures: summaries.flatMap((s) => s.failures),
    skipped: summaries.flatMap((s) => s.skipped),
  };
}

/** The lines CI prints, ending with `N passed, N failed`; and whether the run is green. */
export function render(summary: Summary): { lines: string[]; ok: boolean } {
  const lines: string[] = [];
  for (const f of summary.failures) lines.push(`FAILED: ${f.name}\n  ${f.reason.replace(/\n/g, '\n  ')}`);
  for (const s of summary.skipped) lines.push(`SKIPPED: ${s}`);
  const skipped = summary.skipped.length ? `, ${summary.skipped.length} skipped` : '';
  lines.push(`${summary.passed} passed, ${summary.failed} failed${skipped}`);
  const ok = summary.failed === 0 && summary.failures.length === 0 && summary.passed > 0 && !summary.skipped.length;
  return { lines, ok };
}
