/**
 * The node side of the daemon: the protocol's host files, the boot ID and the daemon's own state
 * file, all under a host root (`/host` in the DaemonSet; a temp directory per simulated node in the
 * tests), and the reboot sentinel command. Writes are atomic (temp file + rename), so a daemon killed
 * mid-write leaves the old state or the new one, never half of one.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { resolveInRoot } from './host-path.js';
import type { HostState } from './state-machine.js';

/** Where the kernel publishes the boot ID (a new one every boot), relative to the host root. */
export const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';
/** The daemon's own state, relative to the host root. */
export const HOST_STATE_PATH = '/var/lib/skyhook/maintenance/state.json';

const SENTINEL_COMMAND_TIMEOUT_MS = 60_000;

export class HostFiles {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  /** A host path (absolute on the host) as this process sees it, links resolved on the host (host-path.ts). */
  path(hostPath: string): string {
    return resolveInRoot(this.root, hostPath);
  }

  async exists(hostPath: string): Promise<boolean> {
    try {
      await stat(this.path(hostPath));
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw e;
    }
  }

  /** Creates the file if absent (`touch`), with its directory. */
  async touch(hostPath: string): Promise<void> {
    const file = this.path(hostPath);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, '', { flag: 'a' });
  }

  async remove(hostPath: string): Promise<void> {
    await rm(this.path(hostPath), { force: true });
  }

  async bootId(): Promise<string> {
    return (await readFile(this.path(BOOT_ID_PATH), 'utf8')).trim();
  }

  async readState(): Promise<HostState> {
    try {
      const parsed: unknown = JSON.parse(await readFile(this.path(HOST_STATE_PATH), 'utf8'));
      const from = (parsed as { rebootingFrom?: unknown } | null)?.rebootingFrom;
      return typeof from === 'string' ? { rebootingFrom: from } : {};
    } catch (e) {
      // Absent: nothing started. Unreadable (never half-written, see writeAtomic): start over.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || e instanceof SyntaxError) return {};
      throw e;
    }
  }

  async writeState(state: HostState): Promise<void> {
    await this.writeAtomic(HOST_STATE_PATH, `${JSON.stringify(state)}\n`);
  }

  async writeAtomic(hostPath: string, content: string): Promise<void> {
    const file = this.path(hostPath);
    await mkdir(dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, content);
    await rename(temp, file);
  }
}

/**
 * Runs kured's `--reboot-sentinel-command`: exit code 0 means a reboot is required, any other exit
 * code means it is not. A command that cannot be started is an error (as in kured).
 */
export function runSentinelCommand(command: readonly string[]): Promise<boolean> {
  const [file, ...args] = command;
  if (!file) return Promise.reject(new Error('empty reboot sentinel command'));
  return new Promise((resolveRun, rejectRun) => {
    execFile(file, args, { timeout: SENTINEL_COMMAND_TIMEOUT_MS }, (error) => {
      if (!error) return resolveRun(true);
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'number') return resolveRun(false);
      rejectRun(error);
    });
  });
}
