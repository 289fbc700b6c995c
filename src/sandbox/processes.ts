/**
 * Child processes of the control plane. Each runs in its own process group with its output in a
 * log file; every live group is recorded so that stop(), an exception, process exit or a
 * SIGINT/SIGTERM of the parent all end them. Pids are also written to the run directory, so a
 * later start can kill what a crashed run left behind (by recorded pid, never by name).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, openSync, closeSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export interface Component {
  name: string;
  pid: number;
  logFile: string;
  child: ChildProcess;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<string>;
}

const live = new Set<Component>();
let handlersInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

function killAllNow(): void {
  for (const component of live) killGroup(component.pid, 'SIGKILL');
  live.clear();
}

/** The parent's exit or a termination signal must not leave a control plane running. */
function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      // Another handler (a CLI's graceful stop) owns the signal; the 'exit' hook still backs it up.
      if (process.listenerCount(signal) > 1) return;
      killAllNow();
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
    });
  }
}

/** `env`, when given, is the child's whole environment (default: this process's). */
export function startComponent(
  runDir: string,
  name: string,
  binary: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
): Component {
  installHandlers();
  const logFile = join(runDir, 'logs', `${name}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(binary, args, {
    detached: true,
    stdio: ['ignore', fd, fd],
    cwd: runDir,
    ...(env ? { env } : {}),
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`could not start ${name} (${binary}); see ${logFile}`);
  const exited = new Promise<string>((resolveExit) => {
    child.on('exit', (code, signal) => resolveExit(signal ?? String(code)));
    child.on('error', (err) => resolveExit(err.message));
  });
  const component: Component = { name, pid: child.pid, logFile, child, exited };
  live.add(component);
  void exited.then(() => live.delete(component));
  appendFileSync(join(runDir, 'pids'), `${child.pid} ${name}\n`);
  return component;
}

/** SIGTERM to the group, SIGKILL after the grace period; resolves once the process has exited. */
export async function stopComponent(component: Component, graceMs = 10_000): Promise<void> {
  if (component.child.exitCode !== null || component.child.signalCode !== null) {
    live.delete(component);
    killGroup(component.pid, 'SIGKILL'); // grandchildren, if any
    return;
  }
  killGroup(component.pid, 'SIGTERM');
  const timer = setTimeout(() => killGroup(component.pid, 'SIGKILL'), graceMs);
  await component.exited;
  clearTimeout(timer);
  killGroup(component.pid, 'SIGKILL');
  live.delete(component);
}

/** True while the process exists and is not a zombie waiting to be reaped. */
/** Blocks this thread for `ms` (for exit hooks and sync teardown paths that cannot await). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ..."; the state letter follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Resolves with the pids still alive once all are gone or `timeoutMs` has passed (signals land asynchronously). */
export async function waitUntilGone(pids: number[], timeoutMs = 5000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(isAlive);
    if (alive.length === 0 || Date.now() > deadline) return alive;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Kills the process groups that earlier runs under `parentDir` recorded, when the run that owned
 * them is gone (its owner pid no longer alive), and removes those run directories.
 */
export function reapStaleRuns(parentDir: string): void {
  if (!existsSync(parentDir)) return;
  for (const entry of readdirSync(parentDir)) {
    const dir = join(parentDir, entry);
    const ownerFile = join(dir, 'owner');
    if (!existsSync(ownerFile)) continue;
    const owner = Number(readFileSync(ownerFile, 'utf8').trim());
    if (owner && isAlive(owner)) continue;
    const pidsFile = join(dir, 'pids');
    if (existsSync(pidsFile)) {
      for (const line of readFileSync(pidsFile, 'utf8').split('\n')) {
        const pid = Number(line.split(' ')[0]);
        if (pid > 1) killGroup(pid, 'SIGKILL');
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
