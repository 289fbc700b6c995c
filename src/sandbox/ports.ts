import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** Asks the kernel for a free loopback port. Racy by nature: callers retry a start on EADDRINUSE. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolvePort(port) : reject(new Error('no port assigned'))));
    });
  });
}

const RESERVATION_MS = 120_000;

/** One place for every process of this machine, whatever run directory each sandbox uses. */
export function defaultReservationDir(): string {
  return join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'skyhook-ts-ports');
}

/** Claims `port` for a while across processes (an O_EXCL file), so two sandboxes starting at once never pick the same one. */
function reserve(dir: string, port: number): boolean {
  const file = join(dir, String(port));
  try {
    closeSync(openSync(file, 'wx'));
    return true;
  } catch {
    try {
      if (Date.now() - statSync(file).mtimeMs < RESERVATION_MS) return false;
      rmSync(file, { force: true });
      closeSync(openSync(file, 'wx'));
      return true;
    } catch {
      return false;
    }
  }
}

/** Drops reservations older than their lifetime, so the directory does not grow without bound. */
function expireReservations(dir: string): void {
  for (const name of readdirSync(dir)) {
    try {
      if (Date.now() - statSync(join(dir, name)).mtimeMs >= RESERVATION_MS) rmSync(join(dir, name), { force: true });
    } catch {
      // Another process removed it first.
    }
  }
}

/**
 * Distinct free ports, each reserved under `reservationDir` for two minutes: long enough for the
 * components to bind them, so concurrent sandboxes (parallel test files) do not collide.
 */
export async function freePorts(count: number, reservationDir = defaultReservationDir()): Promise<number[]> {
  mkdirSync(reservationDir, { recursive: true });
  expireReservations(reservationDir);
  const ports = new Set<number>();
  while (ports.size < count) {
    const port = await freePort();
    if (!ports.has(port) && reserve(reservationDir, port)) ports.add(port);
  }
  return [...ports];
}
