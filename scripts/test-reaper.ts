/**
 * `node --import ./scripts/register-src-hook.ts scripts/test-reaper.ts <run dir> [--keep-dir]`:
 * ends everything a test run started that is still there, found through the run's own directory
 * (scripts/jest/run-dir.cjs), never by process name:
 *   - the control planes under `<run dir>/sandboxes` (their owners first, then each recorded process
 *     group), then their directories;
 *   - the real-node fleets whose owner is a process of this run (a worker pid in `<run dir>/attempts`,
 *     or an owner of one of the run's sandboxes): node processes, network namespaces, veths,
 *     cgroups, slot claims, fleet directories (src/sandbox/real-node/real-nodes.ts reapStaleFleets).
 * Run by jest's global teardown, and by scripts/test-jest.ts after each jest process (jest killed
 * outright runs no teardown). Prints what it ended; exits 0 unless something could not be ended.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, reapStaleRuns, waitUntilGone } from '../src/sandbox/processes.js';
import { DEFAULT_FLEET_BASE, reapStaleFleets } from '../src/sandbox/real-node/real-nodes.js';

function readPid(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

function kill(pid: number, group: boolean): void {
  try {
    process.kill(group ? -pid : pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** This process and its ancestors: jest in band is both a file's runner and the teardown's parent. */
function selfAndAncestors(): Set<number> {
  const chain = new Set<number>([process.pid]);
  let pid = process.ppid;
  while (pid > 1 && !chain.has(pid)) {
    chain.add(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return chain;
}

/** The pids that belong to the run (its jest workers, the owners of its sandboxes), except this process's own line. */
export function runPids(runDir: string): Set<number> {
  const pids = new Set<number>();
  const own = selfAndAncestors();
  const attempts = join(runDir, 'attempts');
  if (existsSync(attempts)) {
    for (const line of readFileSync(attempts, 'utf8').split('\n')) {
      const pid = Number(line.split('\t')[0]);
      if (pid > 1 && !own.has(pid)) pids.add(pid);
    }
  }
  const sandboxes = join(runDir, 'sandboxes');
  if (existsSync(sandboxes)) {
    for (const entry of readdirSync(sandboxes)) {
      const owner = readPid(join(sandboxes, entry, 'owner'));
      if (owner > 1 && !own.has(owner)) pids.add(owner);
    }
  }
  return pids;
}

/** The pids recorded in the sandboxes' `pids` files (each the leader of a process group). */
function sandboxGroups(runDir: string): number[] {
  const sandboxes = join(runDir, 'sandboxes');
  if (!existsSync(sandboxes)) return [];
  const groups: number[] = [];
  for (const entry of readdirSync(sandboxes)) {
    const file = join(sandboxes, entry, 'pids');
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const pid = Number(line.split(' ')[0]);
      if (pid > 1) groups.push(pid);
    }
  }
  return groups;
}

/** Fleet directories owned by one of `owners`. */
function ownedFleets(owners: Set<number>, fleetBase: string): string[] {
  if (!existsSync(fleetBase)) return [];
  return readdirSync(fleetBase)
    .map((entry) => join(fleetBase, entry))
    .filter((dir) => owners.has(readPid(join(dir, 'owner'))));
}

export interface ReapReport {
  killed: number[];
  fleets: string[];
  stillAlive: number[];
}

/**
 * True when `pid` is a process of this run: its environment names the run directory. A recorded
 * pid may since have been reused by an unrelated process, which must never be killed.
 */
export function belongsToRun(pid: number, runDir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`SKYHOOK_TEST_RUN_DIR=${runDir}`);
  } catch {
    return false;
  }
}

export async function reapRun(
  runDir: string,
  options: { keepDir?: boolean; fleetBase?: string } = {},
): Promise<ReapReport> {
  const fleetBase = options.fleetBase ?? DEFAULT_FLEET_BASE;
  const owners = runPids(runDir);
  const fleets = ownedFleets(owners, fleetBase);
  // The owners first: a live owner would go on using (or restart) what is reaped below.
  const liveOwners = [...owners].filter((pid) => isAlive(pid) && belongsToRun(pid, runDir));
  for (const pid of liveOwners) kill(pid, false);
  await waitUntilGone(liveOwners, 10_000);
  // Every owner is now dead, so these reap exactly the run's sandboxes (their recorded process
  // groups), and the fleets of dead owners.
  const groups = sandboxGroups(runDir).filter(isAlive);
  if (existsSync(join(runDir, 'sandboxes'))) reapStaleRuns(join(runDir, 'sandboxes'));
  if (fleets.length > 0) reapStaleFleets(fleetBase);
  const killed = [...liveOwners, ...groups];
  const stillAlive = await waitUntilGone(killed, 10_000);
  if (!options.keepDir) rmSync(runDir, { recursive: true, force: true });
  return { killed, fleets, stillAlive };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runDir = process.argv[2];
  if (!runDir) {
    console.error('usage: test-reaper.ts <run dir> [--keep-dir]');
    process.exit(2);
  }
  const report = await reapRun(runDir, { keepDir: process.argv.includes('--keep-dir') });
  if (report.killed.length || report.fleets.length)
    console.error(
      `[reaper] ${runDir}: ended ${report.killed.join(', ') || 'no processes'}; fleets ${report.fleets.join(', ') || 'none'}`,
    );
  if (report.stillAlive.length) {
    console.error(`[reaper] still alive after SIGKILL: ${report.stillAlive.join(', ')}`);
    process.exit(1);
  }
}
