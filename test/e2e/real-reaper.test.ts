/**
 * A test process killed outright (SIGKILL) while it runs a real node leaves the node's processes,
 * network namespace, veth, cgroups, slot claim, mounts and fleet directory behind; the run's reaper
 * (scripts/test-reaper.ts) finds the fleet through the run directory (owned by a process of the run)
 * and removes all of it. The child starts a control plane and one real node as a test file does.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { newRunDir } from '../../scripts/test-jest.js';
import { reapRun } from '../../scripts/test-reaper.js';
import { realNodeLeftovers } from '../../src/sandbox/real-node/leftovers.js';
import { spawnDoomedChild } from './doomed-child.js';
import { acquireSerialLock } from './real-harness.js';

let release: () => void = () => undefined;
let runDir = '';

beforeAll(async () => {
  release = await acquireSerialLock();
}, 60_000);

afterAll(async () => {
  if (runDir) await reapRun(runDir);
  rmSync(runDir, { recursive: true, force: true });
  release();
}, 120_000);

describe('the run reaper and real nodes', () => {
  it('removes everything a SIGKILLed test process left of its real node', async () => {
    expect(realNodeLeftovers()).toEqual([]);
    runDir = newRunDir();
    mkdirSync(join(runDir, 'sandboxes'));
    const script = `const { startControlPlane } = await import('./src/sandbox/control-plane.ts');
      const { ensureImages } = await import('./src/sandbox/images/ensure-images.ts');
      const { startRealNodes } = await import('./src/sandbox/real-node/real-nodes.ts');
      const images = await ensureImages();
      const cp = await startControlPlane({ nodes: [] });
      const fleet = await startRealNodes(cp, { count: 1, images, namePrefix: 'reap-' });
      console.log('ready ' + fleet.dir); setInterval(() => {}, 1000);`;
    const { child, exited } = await spawnDoomedChild(runDir, script);

    child.kill('SIGKILL');
    await exited;
    // Killed outright, nothing of the node was cleaned up.
    const left = realNodeLeftovers();
    expect(left.some((l) => l.startsWith('network namespace'))).toBe(true);
    expect(left.some((l) => l.startsWith('fleet directory'))).toBe(true);

    const report = await reapRun(runDir, { keepDir: true });
    expect(report.fleets).toHaveLength(1);
    expect(report.stillAlive).toEqual([]);
    expect(realNodeLeftovers()).toEqual([]);
  }, 420_000);
});
