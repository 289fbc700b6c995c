/**
 * Starting a real node's boot (pure process plumbing): the launcher's command line and, once the
 * node's PID 1 exists, moving the launcher out of the node's cgroups.
 */
import { readFileSync } from 'node:fs';
import { runCommand } from '../images/run-command.js';
import { isAlive } from '../processes.js';
import { moveToOwnCgroups } from './host-resources.js';
import { NODE_INIT_SCRIPT } from './rootfs.js';

/**
 * How a boot starts: join the node's cgroups (so `unshare --cgroup` makes them the root of the
 * node's cgroup namespace), drop the capabilities to load modules and set the clock, enter the
 * node's network namespace, and create the others with node-init.sh as their PID 1.
 */
export function launchArgs(netns: string): string[] {
  return [
    '-c',
    'for d in $NODE_CGROUPS; do echo $$ > "$d/cgroup.procs"; done; exec "$@"',
    'launch',
    'setpriv',
    '--bounding-set',
    '-sys_module,-sys_time',
    'nsenter',
    `--net=/run/netns/${netns}`,
    'unshare',
    '--mount',
    '--pid',
    '--uts',
    '--ipc',
    '--cgroup',
    '--fork',
    '--kill-child',
    '--propagation',
    'private',
    'sh',
    NODE_INIT_SCRIPT,
  ];
}

/** The launcher's first child (the node's PID 1), or undefined before it exists. */
export function nodeInitPid(launcher: number): string | undefined {
  try {
    return readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim().split(/\s+/)[0] || undefined;
  } catch {
    return undefined;
  }
}

/** Once PID 1 exists the launcher leaves the node's cgroups, which then hold only the node's processes. */
export async function leaveNodeCgroups(launcher: number): Promise<void> {
  for (let i = 0; i < 200 && isAlive(launcher); i++) {
    if (nodeInitPid(launcher)) return moveToOwnCgroups(launcher);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The node's PID 1 once it is systemd: before that, node-init.sh is still building the node's
 * mounts and its mount namespace still shows the machine's tree.
 */
async function bootedInit(launcher: number): Promise<string | undefined> {
  for (let i = 0; i < 200 && isAlive(launcher); i++) {
    const init = nodeInitPid(launcher);
    if (init && readFileSync(`/proc/${init}/comm`, 'utf8').trim() === 'systemd') return init;
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

/** The argv prefix that runs a command in the node's mount namespace, entered through its PID 1. */
export async function inNode(launcher: number): Promise<string[] | undefined> {
  const init = await bootedInit(launcher).catch(() => undefined);
  return init ? ['-t', init, '-m', '--'] : undefined;
}

/**
 * True when systemd inside the node gave up on `unit` (its start limit hit): a kubelet that keeps
 * exiting would otherwise be restarted for ever while the node never joins.
 */
export async function unitFailed(launcher: number, unit: string): Promise<boolean> {
  const enter = await inNode(launcher);
  if (!enter) return false;
  try {
    await runCommand('nsenter', [...enter, 'systemctl', 'is-failed', '--quiet', unit]);
    return true;
  } catch {
    return false;
  }
}

/** Runs `argv` inside the node (all its namespaces, as a shell on the node would); resolves with stdout. */
export async function execInNode(launcher: number, argv: readonly string[]): Promise<string> {
  const init = await bootedInit(launcher).catch(() => undefined);
  if (!init) throw new Error('the real node is not running systemd');
  return runCommand('nsenter', ['-t', init, '-a', '--', ...argv]);
}
