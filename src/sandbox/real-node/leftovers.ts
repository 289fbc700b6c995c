/**
 * What real nodes could leave on this machine, listed by scanning it rather than by asking the
 * fleet (which may have been killed): node processes, network namespaces, veths, cgroups, slot
 * claims, fleet directories, and mounts under the fleet base. The tests' "nothing left behind"
 * checks, and a way for a person to see what a crashed run left.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../processes.js';
import { DEFAULT_FLEET_BASE } from './real-nodes.js';
import { SLOT_DIR } from './host-resources.js';

/** Program names that only real nodes run on this machine. */
const NODE_PROGRAMS = new Set([
  'kubelet',
  'containerd',
  'containerd-shim-runc-v2',
  'node-init.sh',
  'systemd',
  'systemd-journald',
  'dbus-daemon',
]);

function nodeProcesses(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const programs = argv.slice(0, 2).map((a) => a.split('/').pop() ?? '');
      if (programs.some((p) => NODE_PROGRAMS.has(p)) && isAlive(Number(pid)))
        found.push(`process ${pid}: ${argv.join(' ').trim()}`);
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Slot claims held by a live owner: their resources are in use, not left behind. */
function liveSlots(): Set<number> {
  const live = new Set<number>();
  if (!existsSync(SLOT_DIR)) return live;
  for (const slot of readdirSync(SLOT_DIR)) {
    const owner = Number(readFileSync(join(SLOT_DIR, slot), 'utf8').trim());
    if (owner && isAlive(owner)) live.add(Number(slot));
  }
  return live;
}

/** Everything real nodes left behind, except what belongs to nodes whose owner is alive. */
export function realNodeLeftovers(fleetBase = DEFAULT_FLEET_BASE): string[] {
  const live = liveSlots();
  const notLive = (name: string, pattern: RegExp): boolean => {
    const match = pattern.exec(name);
    return match !== null && !live.has(Number(match[1]));
  };
  const left: string[] = live.size === 0 ? nodeProcesses() : [];
  if (existsSync('/run/netns')) {
    left.push(
      ...readdirSync('/run/netns')
        .filter((n) => notLive(n, /^skyhook-node-(\d+)$/))
        .map((n) => `network namespace ${n}`),
    );
  }
  left.push(
    ...readdirSync('/sys/class/net')
      .filter((n) => notLive(n, /^skyn(\d+)$/))
      .map((n) => `veth ${n}`),
  );
  for (const hierarchy of readdirSync('/sys/fs/cgroup')) {
    const dir = join('/sys/fs/cgroup', hierarchy);
    try {
      left.push(
        ...readdirSync(dir)
          .filter((n) => notLive(n, /^skyhook-node-(\d+)$/))
          .map((n) => `cgroup ${join(dir, n)}`),
      );
    } catch {
      // not a directory
    }
  }
  if (existsSync(SLOT_DIR)) {
    left.push(
      ...readdirSync(SLOT_DIR)
        .filter((s) => !live.has(Number(s)))
        .map((s) => `slot claim ${join(SLOT_DIR, s)}`),
    );
  }
  if (existsSync(fleetBase)) {
    for (const fleet of readdirSync(fleetBase)) {
      const ownerFile = join(fleetBase, fleet, 'owner');
      const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8')) : 0;
      if (!owner || !isAlive(owner)) left.push(`fleet directory ${join(fleetBase, fleet)}`);
    }
  }
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => line.includes(fleetBase) || /\/run\/netns\/skyhook-node-/.test(line));
  left.push(
    ...mounts
      .filter((line) => !/skyhook-node-(\d+)/.test(line) || notLive(line, /skyhook-node-(\d+)/))
      .map((line) => `mount ${line.split(' ')[4]}`),
  );
  return left;
}
