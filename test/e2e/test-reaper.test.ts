/**
 * A test process killed outright (SIGKILL: no exit hook, no afterAll) leaves its control plane
 * running; the run's reaper (scripts/test-reaper.ts) finds it through the run directory alone and
 * ends it. The child below starts a control plane the way a test file does, inside a run directory
 * of its own, and is killed while it runs.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newRunDir } from '../../scripts/test-jest.js';
import { reapRun } from '../../scripts/test-reaper.js';
import { isAlive, waitUntilGone } from '../../src/sandbox/processes.js';
import { spawnDoomedChild } from './doomed-child.js';

let runDir = '';

afterEach(() => {
  rmSync(runDir, { recursive: true, force: true });
});

/** The pids every control plane under the run directory recorded (the leaders of its components' groups). */
function recordedPids(dir: string): number[] {
  const sandboxes = join(dir, 'sandboxes');
  return readdirSync(sandboxes).flatMap((entry) => {
    const file = join(sandboxes, entry, 'pids');
    return existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => Number(line.split(' ')[0]))
      : [];
  });
}

describe('the run reaper', () => {
  it('ends the control plane of a test process killed by SIGKILL, found through the run directory', async () => {
    runDir = newRunDir();
    mkdirSync(join(runDir, 'sandboxes'));
    const script = `const { startControlPlane } = await import('./src/sandbox/control-plane.ts');
      const cp = await startControlPlane({ nodes: [{ name: 'reap-0' }] });
      console.log('ready ' + cp.runDir); setInterval(() => {}, 1000);`;
    const { child, ready, exited } = await spawnDoomedChild(runDir, script);
    // The control plane lives in the run directory, recorded by pid.
    expect(ready.startsWith(join(runDir, 'sandboxes'))).toBe(true);
    const pids = recordedPids(runDir);
    expect(pids.length).toBeGreaterThanOrEqual(3); // etcd, kube-apiserver, controllers, kwok…
    expect(pids.filter(isAlive)).toEqual(pids);

    child.kill('SIGKILL');
    await exited;
    // Killed outright, the child could not stop them: without a reaper they would run on.
    expect(pids.filter(isAlive)).toEqual(pids);

    const report = await reapRun(runDir, { keepDir: true });
    expect(report.stillAlive).toEqual([]);
    expect(await waitUntilGone(pids, 10_000)).toEqual([]);
    expect(readdirSync(join(runDir, 'sandboxes'))).toEqual([]);
  }, 180_000);

  it('leaves alone a live process that is not of the run, though a run file names its pid', async () => {
    runDir = newRunDir();
    const bystander = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      // As if a worker pid of the run had since been reused by an unrelated process.
      writeFileSync(join(runDir, 'attempts'), `${bystander.pid}\t/somewhere/x.test.ts\n`);
      await reapRun(runDir, { keepDir: true });
      expect(isAlive(bystander.pid!)).toBe(true);
    } finally {
      bystander.kill('SIGKILL');
    }
  });
});
