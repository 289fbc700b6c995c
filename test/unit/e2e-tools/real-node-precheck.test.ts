/**
 * Real-node files fail at once, with the reason, on a machine that cannot run real nodes
 * (test/e2e/real-harness.ts realNodeHostProblems), instead of spinning into their hook timeouts.
 * The last case runs a real-node e2e file as an unprivileged user through jest itself.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RealNodeHostFacts, realNodeHostProblems } from '../../e2e/real-harness.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
const CAPABLE: RealNodeHostFacts = {
  platform: 'linux',
  uid: 0,
  missingTools: [],
  missingNamespaces: [],
  overlay: true,
  cgroupsWritable: true,
};

describe('what a machine lacks for real nodes', () => {
  it('is nothing on a capable machine', () => {
    expect(realNodeHostProblems(CAPABLE)).toEqual([]);
  });

  it('names each missing piece', () => {
    expect(realNodeHostProblems({ ...CAPABLE, platform: 'darwin' })).toEqual(['real nodes need Linux; this is darwin']);
    const problems = realNodeHostProblems({
      ...CAPABLE,
      uid: 1000,
      missingTools: ['nsenter'],
      missingNamespaces: ['pid'],
      overlay: false,
      cgroupsWritable: false,
    });
    expect(problems).toEqual([
      'real nodes need root (uid 0); this process runs as uid 1000',
      expect.stringContaining('nsenter is not on PATH'),
      expect.stringContaining('no pid namespace'),
      expect.stringContaining('no overlay filesystem'),
      expect.stringContaining('/sys/fs/cgroup is not writable'),
    ]);
  });

  it('names a failing trial unshare when nothing else is missing', () => {
    expect(
      realNodeHostProblems({ ...CAPABLE, unshareError: 'unshare: unshare failed: Operation not permitted' }),
    ).toEqual([
      expect.stringContaining(
        'unshare --mount --pid --fork fails here: unshare: unshare failed: Operation not permitted',
      ),
    ]);
  });

  const root = process.getuid?.() === 0;
  (root ? it : it.skip)(
    'fails a real-node e2e file run by an unprivileged user in its first hook, with the reason, not a timeout',
    () => {
      const work = mkdtempSync(join(tmpdir(), 'skyhook-nonroot-'));
      try {
        chownSync(work, 65534, 65534);
        const output = join(work, 'result.json');
        const run = spawnSync(
          'setpriv',
          [
            '--reuid=65534',
            '--regid=65534',
            '--clear-groups',
            process.execPath,
            'node_modules/jest/bin/jest.js',
            '--json',
            `--outputFile=${output}`,
            `--cacheDirectory=${join(work, 'cache')}`,
            'test/e2e/real-demo.test.ts',
          ],
          {
            cwd: ROOT,
            encoding: 'utf8',
            env: {
              ...process.env,
              HOME: work,
              SKYHOOK_TEST_RUN_DIR: work,
              NODE_OPTIONS: '--experimental-vm-modules --no-warnings=ExperimentalWarning',
            },
            timeout: 240_000,
          },
        );
        expect(run.error).toBeUndefined();
        const result = JSON.parse(readFileSync(output, 'utf8')) as {
          testResults: { status: string; message: string }[];
        };
        expect(result.testResults).toHaveLength(1);
        const message = result.testResults[0]!.message;
        expect(result.testResults[0]!.status).toBe('failed');
        expect(message).toContain('this machine cannot run real nodes');
        expect(message).toContain('real nodes need root (uid 0); this process runs as uid 65534');
        expect(message).not.toMatch(/Exceeded timeout/);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    },
    300_000,
  );
});
