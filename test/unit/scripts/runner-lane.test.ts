/**
 * The project's jest runner (scripts/jest/runner.cjs) runs real-node files one at a time, each
 * holding the machine-wide lock, and waits for that lock before the file starts, so the wait is
 * not part of any test's timeout. Fixture files in ./fixtures/*.lane.cjs stand in for real-node
 * files (picked by SKYHOOK_REAL_NODE_FILE_PATTERN) and log their starts and ends.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newRunDir, runJest } from '../../../scripts/test-jest.js';
import { judgeRun, render } from '../../../scripts/test-results.js';

const FIXTURES = resolve(fileURLToPath(import.meta.url), '../fixtures');
let work: string;
let runDir: string;
let lockDir: string;
let log: string;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'skyhook-runner-lane-'));
  runDir = newRunDir();
  lockDir = join(work, 'real-node.lock');
  log = join(work, 'lane.log');
  writeFileSync(log, '');
});
afterEach(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(runDir, { recursive: true, force: true });
});

function run() {
  const evidence = runJest({
    label: 'lane',
    suffix: '',
    config: join(FIXTURES, 'lane.config.cjs'),
    args: [],
    expectedFiles: 3,
    runDir,
    outputFile: join(work, 'result.json'),
    quiet: true,
    env: {
      FIXTURE_CACHE: join(work, 'cache'),
      LANE_LOG: log,
      SKYHOOK_REAL_NODE_FILE_PATTERN: 'lane-real-\\d\\.lane\\.cjs$',
      SKYHOOK_REAL_NODE_LOCK_DIR: lockDir,
    },
  });
  if (!evidence) throw new Error('the run was skipped');
  return render(judgeRun(evidence));
}

const events = (): string[] => readFileSync(log, 'utf8').split('\n').filter(Boolean);

describe('the real-node lane', () => {
  it('runs the real-node files one after the other, and leaves the lock free', () => {
    expect(run().lines).toEqual(['3 passed, 0 failed']);
    const real = events().filter((e) => e.includes('lane-real'));
    expect(real).toHaveLength(4);
    // Each real file's end comes right after its own start: they never overlap.
    expect(real[0]!.replace('start', 'end')).toBe(real[1]);
    expect(real[2]!.replace('start', 'end')).toBe(real[3]);
    expect(existsSync(lockDir)).toBe(false);
  }, 60_000);

  it('waits for a lock another process holds before starting a file, outside the 1.5 s test timeout', () => {
    // Another live process holds the lock for 3 s: longer than the fixtures' whole test timeout.
    mkdirSync(lockDir);
    const holder = spawn('sh', ['-c', `sleep 3; echo released >> '${log}'; rm -rf '${lockDir}'`], { stdio: 'ignore' });
    writeFileSync(join(lockDir, 'owner'), String(holder.pid));
    const { lines } = run();
    expect(lines).toEqual(['3 passed, 0 failed']);
    const order = events();
    const released = order.indexOf('released');
    expect(released).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('start lane-real-1')).toBeGreaterThan(released);
    expect(order.indexOf('start lane-real-2')).toBeGreaterThan(released);
  }, 60_000);

  it('takes over the lock of a holder that died', () => {
    mkdirSync(lockDir);
    writeFileSync(join(lockDir, 'owner'), '2147483646'); // no such process
    expect(run().lines).toEqual(['3 passed, 0 failed']);
  }, 60_000);
});
