/**
 * The real nodes of one sandbox: `startRealNodes(controlPlane, …)` builds or reuses the golden root
 * filesystem, lets kubelets in (the `system:node` binding), starts the nodes and waits until they
 * are Ready. Everything they create is undone by stop(), by a failed start, and, synchronously, by
 * the process's exit hook (Ctrl-C, SIGTERM); a fleet whose owner was killed outright is reaped by
 * the next start. Fleets live on disk under /var/tmp (root filesystems are ~1.4 GB each).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { findKubelet } from '../binaries.js';
import { isAlive, sleepSync } from '../processes.js';
import { getJson } from '../../kube/wait.js';
import { silentLogger } from '../../kube/logger.js';
import { deleteNodeNetwork, networkForSlot, releaseSlot, removeCgroups } from './host-resources.js';
import { startRealNode, type RealNode } from './real-node.js';
import { ensureGoldenRootfs, ensureHostPackages, type NodeImages } from './rootfs.js';
import { nameOf } from '../../api/object-meta.js';

export const DEFAULT_FLEET_BASE = '/var/tmp/skyhook-ts-real-nodes';
const READY_TIMEOUT_MS = 120_000;

/** What real nodes need of a control plane (a subset of ControlPlane). */
export interface ControlPlaneForNodes {
  runDir: string;
  server: string;
  kubeConfig: KubeConfig;
  kubectl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

export interface RealNodesOptions {
  count: number;
  images: NodeImages;
  /** Node names are `<prefix><i>`; default `real-`. */
  namePrefix?: string;
  labels?: Record<string, string>;
  /** The sandbox registry's loopback port: nodes pull ghcr.io, docker.io and registry.k8s.io images through it. */
  registryPort?: number;
  baseDir?: string;
  logger?: Logger;
  onProgress?: (message: string) => void;
}

export interface RealNodeFleet {
  dir: string;
  nodes: RealNode[];
  stop(options?: { keepDirs?: boolean }): Promise<void>;
}

const liveNodes = new Set<RealNode>();
const liveFleetDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // processes.ts's exit hook, installed earlier with the control plane, has already SIGKILLed the
  // nodes' process groups; this one waits for them to die and frees what the kernel keeps.
  process.on('exit', () => {
    for (const node of liveNodes) node.destroyNow();
    liveNodes.clear();
    for (const dir of liveFleetDirs) rmSync(dir, { recursive: true, force: true });
  });
}

/** Removes the fleets under `baseDir` whose owning process is gone (killed before it could clean up). */
export function reapStaleFleets(baseDir = DEFAULT_FLEET_BASE): void {
  if (!existsSync(baseDir)) return;
  for (const entry of readdirSync(baseDir)) {
    const dir = join(baseDir, entry);
    const owner = Number(existsSync(join(dir, 'owner')) ? readFileSync(join(dir, 'owner'), 'utf8') : '0');
    if (owner && isAlive(owner)) continue;
    if (existsSync(join(dir, 'pids'))) {
      for (const line of readFileSync(join(dir, 'pids'), 'utf8').split('\n')) {
        const pid = Number(line.split(' ')[0]);
        if (pid > 1)
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {
            /* gone */
          }
      }
    }
    for (const node of readdirSync(dir)) {
      const slotFile = join(dir, node, 'slot');
      if (!existsSync(slotFile)) continue;
      const slot = Number(readFileSync(slotFile, 'utf8'));
      deleteNodeNetwork(networkForSlot(slot));
      // The killed node's processes leave their cgroups a moment after the SIGKILL: retry for up to 10 s.
      for (let i = 0; i < 200 && !removeCgroups(`skyhook-node-${slot}`); i++) sleepSync(50);
      releaseSlot(slot);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

function isReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function tailOf(file: string, lines: number): string {
  if (!existsSync(file)) return '(no such file)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** Polls rather than watches, so a node whose PID 1 died fails the wait at once with its logs. */
async function waitUntilReady(kc: KubeConfig, fleetDir: string, nodes: RealNode[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const names = new Set(nodes.map((n) => n.name));
  for (;;) {
    const failed = (
      await Promise.all(nodes.map(async (n) => ((await n.unitFailed('kubelet.service')) ? n : undefined)))
    ).find((n) => n);
    const crashed = nodes.find((n) => n.crashed || n.poweredOff) ?? failed;
    if (crashed) {
      // The node's directory goes with the failed start: the error carries the end of its logs.
      const tails = [
        join(fleetDir, 'logs', `${crashed.name}.log`),
        join(crashed.logDir, 'kubelet.log'),
        join(crashed.logDir, 'containerd.log'),
      ]
        .map((file) => `--- ${file}\n${tailOf(file, 5)}`)
        .join('\n');
      const why = crashed.crashed
        ? `PID 1 exit ${crashed.crashed}`
        : crashed.poweredOff
          ? 'it powered off'
          : 'kubelet.service failed';
      throw new Error(`real node ${crashed.name} went down while booting (${why}):\n${tails}`);
    }
    const list = await getJson<{ items: V1Node[] }>(kc, '/api/v1/nodes', 10_000);
    const ready = list.items.filter((n) => names.has(nameOf(n)) && isReady(n)).length;
    if (ready === names.size) return;
    if (Date.now() > deadline) {
      throw new Error(
        `real nodes ${[...names].join(', ')} not Ready after ${timeoutMs / 1000} s; see the kubelet logs in ${nodes.map((n) => n.logDir).join(', ')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function bindNodeRole(cp: ControlPlaneForNodes): Promise<void> {
  // The API server authorizes with RBAC only (no Node authorizer), and system:node is bound to nobody.
  const result = await cp.kubectl([
    'create',
    'clusterrolebinding',
    'sandbox-real-nodes',
    '--clusterrole=system:node',
    '--group=system:nodes',
  ]);
  if (result.code !== 0 && !/AlreadyExists/.test(result.stderr))
    throw new Error(`binding system:node for the kubelets failed: ${result.stderr}`);
}

export async function startRealNodes(cp: ControlPlaneForNodes, options: RealNodesOptions): Promise<RealNodeFleet> {
  const progress = options.onProgress ?? (() => undefined);
  const logger = options.logger ?? silentLogger();
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    throw new Error(
      'real nodes need Linux and root (network namespaces, mounts, cgroups); run as root, or use simulated nodes only',
    );
  }
  const baseDir = options.baseDir ?? DEFAULT_FLEET_BASE;
  mkdirSync(baseDir, { recursive: true });
  reapStaleFleets(baseDir);
  installExitHook();
  const dir = mkdtempSync(join(baseDir, 'run-'));
  writeFileSync(join(dir, 'owner'), String(process.pid));
  mkdirSync(join(dir, 'logs'));
  liveFleetDirs.add(dir);
  const nodes: RealNode[] = [];
  const stop = async (stopOptions: { keepDirs?: boolean } = {}): Promise<void> => {
    await Promise.all(
      nodes.map(async (node) => {
        await node.stop({ keepDir: stopOptions.keepDirs });
        liveNodes.delete(node);
      }),
    );
    liveFleetDirs.delete(dir);
    if (!stopOptions.keepDirs) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const started = Date.now();
    const kubelet = findKubelet();
    await ensureHostPackages();
    const golden = await ensureGoldenRootfs(options.images, progress);
    await bindNodeRole(cp);
    const prefix = options.namePrefix ?? 'real-';
    const apiPort = Number(new URL(cp.server).port);
    const ca = { caCert: join(cp.runDir, 'ca.crt'), caKey: join(cp.runDir, 'ca.key') };
    await Promise.all(
      Array.from({ length: options.count }, (_, i) =>
        startRealNode(
          {
            name: `${prefix}${i}`,
            fleetDir: dir,
            golden,
            kubelet,
            ca,
            apiPort,
            logger,
            ...(options.labels ? { labels: options.labels } : {}),
            ...(options.registryPort !== undefined ? { registryPort: options.registryPort } : {}),
          },
          (node) => {
            nodes.push(node);
            liveNodes.add(node);
          },
        ),
      ),
    );
    const names = new Set(nodes.map((n) => n.name));
    await waitUntilReady(cp.kubeConfig, dir, nodes, READY_TIMEOUT_MS);
    progress(`real nodes ${[...names].join(', ')} Ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { dir, nodes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
