/**
 * The runner's verdict on real jest processes (fixture configs in ./fixtures): a run whose config
 * selects no file, a file whose worker crashed and that jest re-ran, a run that died before writing
 * results, and a skipped test are each reported as failed by name; a clean run is green.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newRunDir, runJest, type RunSpec } from '../../../scripts/test-jest.js';
import { judgeRun, render } from '../../../scripts/test-results.js';

const FIXTURES = resolve(fileURLToPath(import.meta.url), '../fixtures');
let work: string;
let runDir: string;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'skyhook-test-jest-run-'));
  runDir = newRunDir();
});
afterEach(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(runDir, { recursive: true, force: true });
});

function spec(config: string, extra: Partial<RunSpec> = {}): RunSpec {
  return {
    label: config,
    suffix: '',
    config: join(FIXTURES, config),
    args: [],
    runDir,
    outputFile: join(work, 'result.json'),
    env: { FIXTURE_MARKER: join(work, 'crashed'), FIXTURE_CACHE: join(work, 'cache') },
    quiet: true,
    ...extra,
  };
}

function verdict(s: RunSpec) {
  const evidence = runJest(s);
  if (!evidence) throw new Error('the run was skipped');
  return { evidence, ...render(judgeRun(evidence)) };
}

describe('the verdict on real jest runs', () => {
  it('fails a run whose config selects none of the files it must run, naming the selection', () => {
    const { ok, lines } = verdict(spec('nothing.config.cjs', { expectedFiles: 2 }));
    expect(ok).toBe(false);
    expect(lines.join('\n')).toMatch(
      /FAILED: nothing\.config\.cjs: file selection\n\s+expected 2 test files, jest selected 0/,
    );
    expect(lines.at(-1)).toMatch(/^0 passed, [1-9]\d* failed$/);
  }, 60_000);

  it("fails a file jest re-ran after its worker exited, although the re-run passed (jest's own runner)", () => {
    const { ok, lines, evidence } = verdict(spec('crash-default-runner.config.cjs'));
    // jest itself calls this run a success: the crash is visible only in the attempts log.
    expect(evidence.result?.success).toBe(true);
    expect(ok).toBe(false);
    expect(lines.join('\n')).toMatch(/FAILED: .*crashes-once\.fixture\.cjs\n\s+started 2 times/);
  }, 60_000);

  it("fails a file whose worker exited at once, without a re-run (the project's runner)", () => {
    const { ok, lines, evidence } = verdict(spec('crash-project-runner.config.cjs'));
    expect(evidence.result?.success).toBe(false);
    expect(evidence.attempts.filter((a) => a.endsWith('crashes-once.fixture.cjs'))).toHaveLength(1);
    expect(ok).toBe(false);
    expect(lines.join('\n')).toMatch(/FAILED: .*crashes-once\.fixture\.cjs/);
  }, 60_000);

  it('fails, by name, a run that died before writing its results', () => {
    // One file runs in jest's own process, so the exit takes jest down with it.
    const { ok, lines, evidence } = verdict(spec('crash-alone.config.cjs'));
    expect(evidence.result).toBeUndefined();
    expect(ok).toBe(false);
    const text = lines.join('\n');
    expect(text).toMatch(/FAILED: crash-alone\.config\.cjs: jest\n\s+exited with 3 and wrote no result file/);
    expect(text).toMatch(
      /FAILED: .*crashes-once\.fixture\.cjs\n\s+listed for crash-alone\.config\.cjs but never reported/,
    );
  }, 60_000);

  it('lists a skipped test by name and does not call the run green', () => {
    const { ok, lines } = verdict(spec('passes.config.cjs', { expectedFiles: 1 }));
    expect(lines).toContain('SKIPPED: ' + join(FIXTURES, 'passes.fixture.cjs') + ': is skipped on purpose');
    expect(lines.at(-1)).toBe('1 passed, 0 failed, 1 skipped');
    expect(ok).toBe(false);
  }, 60_000);
});
