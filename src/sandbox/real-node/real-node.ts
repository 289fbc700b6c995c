/**
 * One real node: its directory (root filesystem, logs, boot ID), network slot, cgroups, API relay,
 * and the supervisor loop that is its power button. Each boot empties the node's cgroups, then runs
 * node-init.sh (which execs systemd) as PID 1 of fresh mount/PID/UTS/IPC/cgroup namespaces inside the
 * node's network namespace, as a process group recorded by processes.ts. When PID 1 dies of SIGHUP
 * (reboot(2) in the node's PID namespace: `reboot`, `systemctl reboot`) the node boots again with a
 * new boot ID; SIGINT (poweroff, halt) leaves it off; the disk persists, /run does not.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Logger } from 'pino';
import { SANDBOX_NAMES } from '../../api/names.js';
import { runCommand } from '../images/run-command.js';
import { isAlive, sleepSync, startComponent, stopComponent, type Component } from '../processes.js';
import { startApiRelay, type ApiRelay } from './api-relay.js';
import { aptProxyConfig, startAptProxy, type AptProxy } from './apt-proxy.js';
import {
  cgroupDirs,
  claimSlot,
  createCgroups,
  createNodeNetwork,
  deleteNodeNetwork,
  emptyCgroups,
  networkForSlot,
  releaseSlot,
  removeCgroups,
  type NodeNetwork,
} from './host-resources.js';
import { makeKubeletClientCert, type CaFiles } from './kubelet-cert.js';
import { kubeletConfig, kubeletDefaults, kubeletKubeconfig, NODE_PATHS } from './node-files.js';
import { REGISTRY_SOCKET, writeNodeRegistryFiles } from './node-registry.js';
import { execInNode, inNode, launchArgs, leaveNodeCgroups, unitFailed } from './node-launch.js';
import { copyRootfs } from './rootfs.js';

export interface RealNodeSpec {
  name: string;
  /** The fleet's directory: node directories, `logs/`, `pids`. */
  fleetDir: string;
  golden: string;
  kubelet: string;
  ca: CaFiles;
  apiPort: number;
  /** The sandbox registry's port on the machine's loopback: the node pulls mirrored registries' images from it. */
  registryPort?: number;
  labels?: Record<string, string>;
  logger: Logger;
}

export interface NodeBoot {
  bootId: string;
  at: number;
}

export interface RealNode {
  name: string;
  /** The node's `/`: what its Jobs see through hostPath: /. */
  rootDir: string;
  /** Host side of the node's /run/host: kubelet.log, containerd.log. */
  logDir: string;
  nodeIp: string;
  /** Boots in order (boot ID, Date.now() when started); the last one is current. */
  readonly boots: readonly NodeBoot[];
  /** Set when PID 1 exited other than by a reboot or a poweroff: the node is down for good. */
  readonly crashed: string | undefined;
  /** True once the node powered itself off (poweroff, halt): down, not crashed. */
  readonly poweredOff: boolean;
  /** True when the node's systemd gave up on `unit` (e.g. `kubelet.service` exiting again and again). */
  unitFailed(unit: string): Promise<boolean>;
  /** Runs a command inside the running node (all its namespaces); resolves with its stdout. */
  exec(argv: readonly string[]): Promise<string>;
  stop(options?: { keepDir?: boolean }): Promise<void>;
  /** What stop() undoes, synchronously, for process-exit hooks: kills the node and frees its resources. */
  destroyNow(): void;
  /**
   * Imports a docker-archive into the running node's containerd, where a pull from a registry would
   * have put it (the nodes have no registry): for images made after the node's root filesystem.
   */
  importImage(archive: string): Promise<void>;
}

/** What a node's handle and its boot loop share while it runs. */
interface NodeRun {
  readonly name: string;
  readonly dir: string;
  readonly rootDir: string;
  readonly logDir: string;
  readonly net: NodeNetwork;
  readonly cgroupName: string;
  readonly boots: NodeBoot[];
  current: Component | undefined;
  relay: ApiRelay | undefined;
  registryRelay: ApiRelay | undefined;
  aptProxy: AptProxy | undefined;
  stopping: boolean;
  crashed: string | undefined;
  poweredOff: boolean;
}

export async function startRealNode(spec: RealNodeSpec, onResources: (node: RealNode) => void): Promise<RealNode> {
  const dir = join(spec.fleetDir, spec.name);
  const net: NodeNetwork = networkForSlot(claimSlot());
  const run: NodeRun = {
    name: spec.name,
    dir,
    rootDir: join(dir, 'rootfs'),
    logDir: join(dir, 'host', 'logs'),
    net,
    cgroupName: `skyhook-node-${net.slot}`,
    boots: [],
    current: undefined,
    relay: undefined,
    registryRelay: undefined,
    aptProxy: undefined,
    stopping: false,
    crashed: undefined,
    poweredOff: false,
  };
  const node = realNodeHandle(run);
  onResources(node);

  mkdirSync(join(dir, 'host', 'logs'), { recursive: true });
  writeFileSync(join(dir, 'slot'), String(net.slot));
  await copyRootfs(spec.golden, run.rootDir, spec.fleetDir, spec.name);
  if (run.stopping) return node;
  await writeNodeFiles(spec, run);
  createNodeNetwork(net);
  createCgroups(run.cgroupName);
  run.relay = await startApiRelay(join(dir, 'host', 'api.sock'), spec.apiPort);
  if (spec.registryPort !== undefined) {
    writeNodeRegistryFiles(run.rootDir);
    run.registryRelay = await startApiRelay(join(dir, 'host', REGISTRY_SOCKET), spec.registryPort);
  }
  run.aptProxy = await startAptProxy(net.hostIp);
  if (run.stopping) return node;
  await bootLoop(spec, run)();
  return node;
}

function realNodeHandle(run: NodeRun): RealNode {
  const { dir, net, cgroupName } = run;
  const destroyNow = (): void => {
    run.stopping = true;
    if (run.current) {
      try {
        process.kill(-run.current.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      for (let i = 0; i < 100 && isAlive(run.current.pid); i++) sleepSync(50);
    }
    deleteNodeNetwork(net);
    for (let i = 0; i < 100 && !removeCgroups(cgroupName); i++) sleepSync(50);
    releaseSlot(net.slot);
    // A killed copy may finish its last write after the first pass.
    for (let i = 0; i < 3 && existsSync(dir); i++) {
      rmSync(dir, { recursive: true, force: true });
      sleepSync(50);
    }
  };
  return {
    name: run.name,
    rootDir: run.rootDir,
    logDir: run.logDir,
    nodeIp: net.nodeIp,
    boots: run.boots,
    get crashed() {
      return run.crashed;
    },
    get poweredOff() {
      return run.poweredOff;
    },
    unitFailed: async (unit) => (run.current ? unitFailed(run.current.pid, unit) : false),
    exec: async (argv) => {
      if (!run.current) throw new Error(`real node ${run.name} is not running`);
      return execInNode(run.current.pid, argv);
    },
    destroyNow,
    importImage: (archive) => importIntoNode(run, archive),
    async stop(options = {}) {
      run.stopping = true;
      if (run.current) await stopComponent(run.current, 0); // SIGKILL: unshare ignores SIGTERM; the node's PID 1 takes everything with it
      await run.relay?.stop();
      await run.registryRelay?.stop();
      await run.aptProxy?.stop();
      // Processes of a killed PID namespace leave their cgroups a moment later.
      for (let i = 0; i < 200 && !removeCgroups(cgroupName); i++) await new Promise((r) => setTimeout(r, 50));
      deleteNodeNetwork(net);
      releaseSlot(net.slot);
      if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The node's identity in its root filesystem: CA, kubelet client certificate, config and flags, machine ID, hostname. */
async function writeNodeFiles(spec: RealNodeSpec, { dir, rootDir, net }: NodeRun): Promise<void> {
  copyFileSync(spec.ca.caCert, join(rootDir, NODE_PATHS.caCert));
  const { cert, key } = await makeKubeletClientCert(spec.ca, spec.name, join(dir, 'host'));
  copyFileSync(cert, join(rootDir, NODE_PATHS.kubeletCert));
  copyFileSync(key, join(rootDir, NODE_PATHS.kubeletKey));
  writeFileSync(join(rootDir, NODE_PATHS.kubeletConfig), kubeletConfig());
  const labels = Object.entries({ ...spec.labels, [SANDBOX_NAMES.nodeKindLabel]: 'real' })
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  writeFileSync(join(rootDir, NODE_PATHS.kubeletDefaults), kubeletDefaults(spec.name, net.nodeIp, labels));
  writeFileSync(join(rootDir, NODE_PATHS.kubeletKubeconfig), kubeletKubeconfig());
  writeFileSync(join(rootDir, 'etc/apt/apt.conf.d/00sandbox-proxy'), aptProxyConfig(net.hostIp));
  writeFileSync(join(rootDir, 'etc/machine-id'), `${randomBytes(16).toString('hex')}\n`);
  writeFileSync(join(rootDir, 'etc/hostname'), `${spec.name}\n`);
}

/** The node's power button: a function that boots it, and boots it again each time it reboots itself. */
function bootLoop(spec: RealNodeSpec, run: NodeRun): () => Promise<void> {
  const { dir, net, boots, logDir, cgroupName } = run;
  const logger = spec.logger.child({ node: spec.name });
  const env = {
    ...process.env,
    NODE_DIR: dir,
    NODE_MODE: 'boot',
    NODE_NAME: spec.name,
    KUBELET_BIN: spec.kubelet,
    NODE_CGROUPS: cgroupDirs(cgroupName).join(' '),
  };
  const boot = async (): Promise<void> => {
    for (let i = 0; i < 200 && !emptyCgroups(cgroupName); i++) await new Promise((r) => setTimeout(r, 50));
    if (run.stopping) return;
    const bootId = randomUUID();
    writeFileSync(join(dir, 'boot_id'), `${bootId}\n`);
    boots.push({ bootId, at: Date.now() });
    logger.info({ bootId, boot: boots.length }, 'booting real node');
    const component = startComponent(spec.fleetDir, spec.name, 'sh', launchArgs(net.netns), env);
    run.current = component;
    void component.exited.then((how) => {
      if (run.stopping) return;
      // unshare re-raises the signal that ended the node's PID 1.
      if (how === 'SIGHUP' || how === '129') {
        logger.info({ bootId }, 'real node rebooted itself');
        void boot();
      } else if (how === 'SIGINT' || how === '130') {
        run.poweredOff = true;
        logger.info({ bootId }, 'real node powered itself off');
      } else {
        run.crashed = how;
        logger.error({ exit: how, logs: logDir }, 'real node PID 1 exited: the node is down');
      }
    });
    await leaveNodeCgroups(component.pid);
  };
  return boot;
}

/**
 * `ctr images import` inside the node's mount namespace (its `/`, its containerd socket), entered
 * through its PID 1: the child of the `unshare --fork` the supervisor started. The archive goes
 * through the node's /run/host, which is the node directory's host/ on the machine.
 */
async function importIntoNode(run: NodeRun, archive: string): Promise<void> {
  const enter = run.current ? await inNode(run.current.pid) : undefined;
  if (!enter) throw new Error(`real node ${run.name} is not running`);
  const name = `import-${process.pid}-${basename(archive)}`;
  copyFileSync(archive, join(run.dir, 'host', name));
  try {
    await runCommand('nsenter', [...enter, 'ctr', '--namespace', 'k8s.io', 'images', 'import', `/run/host/${name}`]);
  } finally {
    rmSync(join(run.dir, 'host', name), { force: true });
  }
}
