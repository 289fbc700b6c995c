/**
 * An exclusive lock over the image cache, so parallel test files and a concurrent `npm run images`
 * build a key once and never write the same buildah storage at the same time. The lock is a kernel
 * flock(2) held by a small `flock … cat` child: when this process exits or crashes, the child's
 * stdin closes, cat ends and the kernel drops the lock; there is no stale lock file to clean up.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export interface CacheLock {
  release(): Promise<void>;
}

const ACQUIRED = 'acquired\n';

/** Waits until the lock on `lockFile` is ours; `onWait` is called once if someone else holds it. */
export async function acquireCacheLock(lockFile: string, onWait: () => void = () => {}): Promise<CacheLock> {
  mkdirSync(dirname(lockFile), { recursive: true });
  // --nonblock first, so the caller can say why it waits; then the blocking form.
  const tryOnce = (blocking: boolean) =>
    spawn(
      'flock',
      [
        ...(blocking ? [] : ['--nonblock', '--conflict-exit-code', '75']),
        lockFile,
        'sh',
        '-c',
        `printf '${ACQUIRED.trim()}\\n'; exec cat`,
      ],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
  let child = tryOnce(false);
  let acquired = await waitForAcquired(child);
  if (!acquired) {
    onWait();
    child = tryOnce(true);
    acquired = await waitForAcquired(child);
    if (!acquired) throw new Error(`could not lock ${lockFile} (is util-linux's flock installed?)`);
  }
  const holder = child;
  const exited = new Promise<void>((resolveExit) => {
    if (holder.exitCode !== null) resolveExit();
    else holder.once('exit', () => resolveExit());
  });
  // If this process dies without release(), the kernel closes the pipe: cat ends and so does the lock.
  return {
    release: async () => {
      holder.stdin!.end();
      await exited;
    },
  };
}

/** True once the child printed the marker; false when it exited first (lock busy or flock missing). */
function waitForAcquired(child: ReturnType<typeof spawn>): Promise<boolean> {
  return new Promise((resolveWait) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes(ACQUIRED)) resolveWait(true);
    });
    child.on('error', () => resolveWait(false));
    child.on('exit', () => resolveWait(false));
  });
}
