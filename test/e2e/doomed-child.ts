/**
 * A child test process for the reaper tests: runs `script` (ESM, with the project's source hook) in
 * its own run directory, as a jest worker would, and resolves once it prints `ready <path>`. The
 * tests then kill it outright and check what the run's reaper removes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './skyhook-harness.js';

export interface DoomedChild {
  readonly child: ChildProcess;
  /** The path the child printed after `ready`. */
  readonly ready: string;
  /** Resolves when the child has exited. */
  readonly exited: Promise<void>;
}

export async function spawnDoomedChild(runDir: string, script: string): Promise<DoomedChild> {
  const child = spawn(
    process.execPath,
    ['--import', './scripts/register-src-hook.ts', '--input-type=module', '-e', script],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, SKYHOOK_TEST_RUN_DIR: runDir, SKYHOOK_SANDBOX_BASE: join(runDir, 'sandboxes') },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const ready = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /ready (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    void exited.then(() => reject(new Error(`the child exited before it was ready: ${out}`)));
  });
  return { child, ready, exited };
}
