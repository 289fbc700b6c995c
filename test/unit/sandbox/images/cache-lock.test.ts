import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireCacheLock } from '../../../../src/sandbox/images/cache-lock.js';

const settle = (ms: number): Promise<void> => new Promise((resolveWait) => setTimeout(resolveWait, ms));

/** Waits until `ready()` holds (checked every 10 ms), so a loaded machine makes it slower, never wrong. */
async function until(what: string, ready: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await settle(10);
  }
}

describe('the image cache lock', () => {
  let dir: string;
  let lockFile: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'image-lock-'));
    lockFile = join(dir, 'sub/.lock');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lets one holder in at a time, and the waiter is told it waits', async () => {
    const first = await acquireCacheLock(lockFile);
    let waited = 0;
    let secondAcquired = false;
    const second = acquireCacheLock(lockFile, () => waited++).then((lock) => {
      secondAcquired = true;
      return lock;
    });
    await until('the waiter to be told it waits', () => waited > 0);
    expect(secondAcquired).toBe(false);
    expect(waited).toBe(1);
    await first.release();
    await (await second).release();
    expect(secondAcquired).toBe(true);
  });

  it('is free again when its holder process is killed without releasing it', async () => {
    // A separate Node process takes the lock through this module, then dies by SIGKILL.
    const script = `const { acquireCacheLock } = await import('./src/sandbox/images/cache-lock.ts');
      await acquireCacheLock(${JSON.stringify(lockFile)}); console.log('held'); setInterval(() => {}, 1000);`;
    const holder = spawn(
      process.execPath,
      ['--import', './scripts/register-src-hook.ts', '--input-type=module', '-e', script],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolveHeld) => holder.stdout!.once('data', () => resolveHeld()));
    let waited = false;
    const lock = acquireCacheLock(lockFile, () => (waited = true));
    await until('the waiter to be told it waits', () => waited);
    holder.kill('SIGKILL');
    await (await lock).release();
  });
});
