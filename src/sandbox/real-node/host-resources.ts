/**
 * What a real node takes from the machine outside its own namespaces: a network slot (a network
 * namespace with a veth pair and a /30 out of 10.213.0.0/16), and a kubelet cgroupRoot in every
 * cgroup hierarchy. Slots are claimed with O_EXCL files holding the owner's pid, so nodes of
 * parallel sandboxes never share a name or an address; each resource has a synchronous remover,
 * so the process's exit hook can undo everything even when it cannot wait for promises.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
  openSync,
  closeSync,
} from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../processes.js';

export interface NodeNetwork {
  slot: number;
  /** `ip netns` name, also the file under /run/netns that nsenter enters. */
  netns: string;
  hostInterface: string;
  hostIp: string;
  nodeIp: string;
}

export const SLOT_DIR = '/run/skyhook-ts-real-node-slots';
/** 10.213.<slot/64>.<(slot%64)*4 + 1|2>: 16,384 slots of a /30 each. */
const MAX_SLOTS = 16_384;

export function networkForSlot(slot: number): NodeNetwork {
  const third = Math.floor(slot / 64);
  const base = (slot % 64) * 4;
  return {
    slot,
    netns: `skyhook-node-${slot}`,
    hostInterface: `skyn${slot}`,
    hostIp: `10.213.${third}.${base + 1}`,
    nodeIp: `10.213.${third}.${base + 2}`,
  };
}

function ip(args: string[]): void {
  try {
    execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim() ?? '';
    throw new Error(`ip ${args.join(' ')} failed: ${stderr || (error as Error).message}`);
  }
}

/** Claims the lowest free slot for `ownerPid`; a slot whose owner died is taken over. */
export function claimSlot(ownerPid = process.pid): number {
  mkdirSync(SLOT_DIR, { recursive: true });
  for (let slot = 0; slot < MAX_SLOTS; slot++) {
    const file = join(SLOT_DIR, String(slot));
    try {
      closeSync(openSync(file, 'wx'));
      writeFileSync(file, String(ownerPid));
      return slot;
    } catch {
      const owner = Number(readFileSync(file, 'utf8').trim());
      if (owner && owner !== ownerPid && !isAlive(owner) && !existsSync(`/run/netns/${networkForSlot(slot).netns}`)) {
        writeFileSync(file, String(ownerPid));
        return slot;
      }
    }
  }
  throw new Error(`all ${MAX_SLOTS} real-node network slots under ${SLOT_DIR} are taken; remove stale files there`);
}

export function releaseSlot(slot: number): void {
  rmSync(join(SLOT_DIR, String(slot)), { force: true });
}

/** The node's network namespace, linked to the machine only by a veth pair; no default route. */
export function createNodeNetwork(net: NodeNetwork): void {
  deleteNodeNetwork(net); // a crashed run's leftovers of the same slot
  ip(['netns', 'add', net.netns]);
  try {
    ip(['link', 'add', net.hostInterface, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', net.netns]);
    ip(['addr', 'add', `${net.hostIp}/30`, 'dev', net.hostInterface]);
    ip(['link', 'set', net.hostInterface, 'up']);
    ip(['-n', net.netns, 'addr', 'add', `${net.nodeIp}/30`, 'dev', 'eth0']);
    ip(['-n', net.netns, 'link', 'set', 'eth0', 'up']);
    ip(['-n', net.netns, 'link', 'set', 'lo', 'up']);
  } catch (error) {
    deleteNodeNetwork(net);
    throw error;
  }
}

/** Deleting the namespace destroys the veth pair once its last process is gone; the host end is removed too in case it lingers. */
export function deleteNodeNetwork(net: NodeNetwork): void {
  if (existsSync(`/run/netns/${net.netns}`)) {
    try {
      ip(['netns', 'delete', net.netns]);
    } catch {
      /* already gone */
    }
  }
  if (existsSync(`/sys/class/net/${net.hostInterface}`)) {
    try {
      ip(['link', 'delete', net.hostInterface]);
    } catch {
      /* went with the namespace */
    }
  }
}

const CGROUP_ROOT = '/sys/fs/cgroup';

/** Hierarchies to create the kubelet's cgroupRoot in: every v1 controller directory (cgroup v2: the one root). */
function hierarchies(): string[] {
  if (existsSync(join(CGROUP_ROOT, 'cgroup.controllers'))) return [CGROUP_ROOT];
  return readdirSync(CGROUP_ROOT, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.isSymbolicLink())
    .map((e) => join(CGROUP_ROOT, e.name));
}

export function createCgroups(name: string): void {
  for (const hierarchy of hierarchies()) {
    const dir = join(hierarchy, name);
    mkdirSync(dir, { recursive: true });
    // A new cpuset cgroup starts with no CPUs or memory nodes: copy the parent's.
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      if (existsSync(join(hierarchy, file)) && readFileSync(join(dir, file), 'utf8').trim() === '') {
        writeFileSync(join(dir, file), readFileSync(join(hierarchy, file)));
      }
    }
  }
}

function removeTree(dir: string): boolean {
  if (!existsSync(dir)) return true;
  let removed = true;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) removed = removeTree(join(dir, entry.name)) && removed;
  }
  try {
    rmdirSync(dir);
  } catch {
    removed = false; // still has tasks: they are being killed
  }
  return removed;
}

/** Removes the cgroups depth-first; false while some still hold (dying) processes. */
export function removeCgroups(name: string): boolean {
  let removed = true;
  for (const hierarchy of hierarchies()) removed = removeTree(join(hierarchy, name)) && removed;
  return removed;
}

/** Leftovers of `name` on this machine, for the tests' "nothing left behind" checks. */
export function cgroupsLeft(name: string): string[] {
  return hierarchies()
    .map((h) => join(h, name))
    .filter((dir) => existsSync(dir));
}

/** The node's cgroup in every hierarchy: the launcher joins them all before creating the cgroup namespace. */
export function cgroupDirs(name: string): string[] {
  return hierarchies().map((h) => join(h, name));
}

/**
 * Empties the node's cgroups (removes every sub-cgroup, deepest first) as a real machine starts
 * with empty cgroupfs: stale container scopes of the last boot would stall the kubelet's start.
 * False while some still hold (dying) processes.
 */
export function emptyCgroups(name: string): boolean {
  let removed = true;
  for (const dir of cgroupDirs(name)) {
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (entry.isDirectory()) removed = removeTree(join(dir, entry.name)) && removed;
  }
  return removed;
}

/** This process's cgroup in the hierarchy mounted at `hierarchy` (from /proc/self/cgroup). */
function ownCgroup(hierarchy: string): string | undefined {
  const base = hierarchy.split('/').pop() ?? '';
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n')) {
    const [id, controllers = '', path = '/'] = line.split(':');
    const unified = id === '0' && controllers === '';
    if (unified ? base === 'unified' || hierarchy === CGROUP_ROOT : controllers.split(',').includes(base)) return path;
    if (controllers === `name=${base}`) return path;
  }
  return undefined;
}

/** Moves `pid` (the node's launcher, once the node's PID 1 exists) back into this process's cgroups. */
export function moveToOwnCgroups(pid: number): void {
  for (const hierarchy of hierarchies()) {
    const own = ownCgroup(hierarchy);
    if (own === undefined) continue;
    try {
      writeFileSync(join(hierarchy, own, 'cgroup.procs'), String(pid));
    } catch {
      /* the launcher is gone (the node stopped at once) */
    }
  }
}
