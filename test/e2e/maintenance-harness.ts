/**
 * What the maintenance e2e files share: a control plane with simulated nodes and our CRDs, the
 * operator's maintenance controller in this process (other controllers and the arbiter as a test
 * asks), one `skyhook maintenance` process per node, each with its own temp host root (killable and
 * restartable), the maintenance "script" of each node played by the test, and a watcher of the
 * nodes cordoned under a policy's claim for a whole test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, type V1Node } from '@kubernetes/client-node';
import type { MaintenancePolicy, MaintenancePolicySpec } from '../../src/api/maintenance-policy.js';
import { MAINTENANCE_LEASE } from '../../src/api/maintenance-protocol.js';
import { API_GROUP, API_VERSION, KINDS } from '../../src/api/names.js';
import { maintenanceClaim } from '../../src/jobs/cordon/claims.js';
import {
  maintenanceControllerFactory,
  type MaintenanceControllerOptions,
} from '../../src/controllers/maintenance/controller.js';
import { isNotFound } from '../../src/kube/errors.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { startManager, type Manager } from '../../src/kube/manager.js';
import type { ControllerFactory } from '../../src/kube/runtime.js';
import { waitForList } from '../../src/kube/wait.js';
import { BOOT_ID_PATH } from '../../src/maintenance-daemon/host.js';
import { startControlPlane, type ControlPlane, type SimulatedNode } from '../../src/sandbox/control-plane.js';
import { startSimulatedHost, type SimulatedHostOptions } from '../../src/sandbox/simulated-host.js';
import { installOperatorPrerequisites, NAMESPACE, REPO_ROOT } from './skyhook-cluster.js';
import { retryOnConflict } from './conflict-retry.js';
import { eventually } from './eventually.js';
import { waitCrdsEstablished } from '../../src/sandbox/crds-established.js';

export const REQUIRED = '/var/maintenance-required';
export const IN_PROGRESS = '/var/maintenance-in-progress';
export const REBOOT_SENTINEL = '/var/run/reboot-required';
const POLICIES_PATH = `/apis/${API_GROUP}/${API_VERSION}/${KINDS.maintenancePolicy.plural}`;

export interface MaintenanceHarness {
  cp: ControlPlane;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  coordination: CoordinationV1Api;
  /** The host path `path` of `node` in this process's file system. */
  hostPath(node: string, path: string): string;
  startDaemon(node: string): void;
  /** SIGKILL (no cleanup, as a crash) and wait until the process is gone. */
  killDaemon(node: string): Promise<void>;
  startOperator(extra?: ControllerFactory[]): Promise<void>;
  stopOperator(): Promise<void>;
  stop(): Promise<void>;
}

export interface MaintenanceHarnessOptions {
  controller?: MaintenanceControllerOptions;
  /** Controllers started beside the maintenance controller (the Skyhook and NodeOp ones). */
  extraControllers?: ControllerFactory[];
  /** Start the simulated host side of Skyhook interrupts (reboot pods) with these options. */
  simulatedHost?: SimulatedHostOptions;
}

export async function startMaintenanceHarness(
  nodes: SimulatedNode[],
  options: MaintenanceHarnessOptions = {},
): Promise<MaintenanceHarness> {
  const cp = await startControlPlane({ nodes, podDurationMs: 250 });
  await installOperatorPrerequisites(cp);
  await waitCrdsEstablished(cp, [`crd/${KINDS.maintenancePolicy.plural}.${API_GROUP}`]);
  const kc = cp.kubeConfig;
  const roots = mkdtempSync(join(tmpdir(), 'skyhook-maintenance-e2e-'));
  const hostPath = (node: string, path: string): string => join(roots, node, path);
  const daemons = new Map<string, ChildProcess>();
  let manager: Manager | undefined;
  let generation = 0;
  for (const { name } of nodes) {
    mkdirSync(hostPath(name, '/proc/sys/kernel/random'), { recursive: true });
    writeFileSync(hostPath(name, BOOT_ID_PATH), `${randomUUID()}\n`);
  }
  const startOperator = async (extra = options.extraControllers ?? []): Promise<void> => {
    manager = await startManager({
      kc,
      logger: silentLogger(),
      namespace: NAMESPACE,
      identity: `maintenance-e2e-${++generation}`,
      leaderElect: false,
      leaseName: 'maintenance-e2e',
      health: { host: '127.0.0.1', port: 0 },
      metrics: { host: '127.0.0.1', port: 0 },
      controllers: [...extra, maintenanceControllerFactory(options.controller)],
      drainDeadlineMs: 5_000,
    });
  };
  const stopOperator = async (): Promise<void> => {
    await manager?.shutdown();
    manager = undefined;
  };
  const logOf = (node: string): string => join(roots, `${node}.log`);
  const startDaemon = (node: string): void => {
    // Warnings and errors only (--log-level warn), kept per node and shown when the harness stops.
    const log = openSync(logOf(node), 'a');
    const child = spawn(
      process.execPath,
      [
        join(REPO_ROOT, 'bin/skyhook.js'),
        'maintenance',
        ...['--node', node, '--host-root', join(roots, node), '--namespace', NAMESPACE],
        ...['--period', '250ms', '--heartbeat', '1s', '--reboot-method', 'simulated'],
        ...['--kubeconfig', cp.kubeconfigPath, '--log-level', 'warn'],
      ],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    daemons.set(node, child);
  };
  const killDaemon = async (node: string): Promise<void> => {
    const child = daemons.get(node);
    daemons.delete(node);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
    child.kill('SIGKILL');
    await exited;
  };
  await startOperator();
  const simulatedHost = options.simulatedHost ? await startSimulatedHost(kc, options.simulatedHost) : undefined;
  return {
    cp,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    coordination: kc.makeApiClient(CoordinationV1Api),
    hostPath,
    startDaemon,
    killDaemon,
    startOperator,
    stopOperator,
    stop: async () => {
      await Promise.all([...daemons.keys()].map(killDaemon));
      await simulatedHost?.stop();
      for (const { name } of nodes) {
        const text = existsSync(logOf(name)) ? readFileSync(logOf(name), 'utf8').trim() : '';
        if (text) console.error(`daemon of ${name}:\n${text.split('\n').slice(-20).join('\n')}`);
      }
      await stopOperator();
      await cp.stop();
      rmSync(roots, { recursive: true, force: true });
    },
  };
}

/** Starts the daemons of `nodes` and waits until each has made its Lease. */
export async function startDaemons(h: MaintenanceHarness, nodes: string[], timeoutMs = 90_000): Promise<void> {
  for (const node of nodes) h.startDaemon(node);
  await waitForList(
    h.cp.kubeConfig,
    `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases?labelSelector=${MAINTENANCE_LEASE.nodeLabel}`,
    (leases) => nodes.every((n) => leases.some((l) => l.metadata?.labels?.[MAINTENANCE_LEASE.nodeLabel] === n)),
    timeoutMs,
    'maintenance Leases',
  );
}

export async function applyPolicy(h: MaintenanceHarness, name: string, spec: MaintenancePolicySpec): Promise<void> {
  const ref = { group: API_GROUP, version: API_VERSION, plural: KINDS.maintenancePolicy.plural };
  const body = {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: KINDS.maintenancePolicy.kind,
    metadata: { name },
    spec,
  };
  // Create, or read-change-write as `kubectl apply` would.
  await retryOnConflict(async () => {
    let current: MaintenancePolicy;
    try {
      current = (await h.custom.getClusterCustomObject({ ...ref, name })) as MaintenancePolicy;
    } catch (e) {
      if (!isNotFound(e)) throw e;
      await h.custom.createClusterCustomObject({ ...ref, body });
      return;
    }
    await h.custom.replaceClusterCustomObject({ ...ref, name, body: { ...current, spec } });
  });
}

export async function waitForPolicy(
  h: MaintenanceHarness,
  name: string,
  done: (policy: MaintenancePolicy) => boolean,
  timeoutMs = 60_000,
): Promise<MaintenancePolicy> {
  const found = await waitForList<MaintenancePolicy>(
    h.cp.kubeConfig,
    POLICIES_PATH,
    (all) => all.some((p) => p.metadata.name === name && done(p)),
    timeoutMs,
    `MaintenancePolicy ${name}`,
  );
  return found.find((p) => p.metadata.name === name)!;
}

/** Plays each node's maintenance script: `durationMs` after the in-progress file appears, it removes the required file (unless it fails). */
export function runScripts(
  h: MaintenanceHarness,
  nodes: string[],
  options: { durationMs: number; failing?: ReadonlySet<string> },
): { inProgressSeen: Map<string, number>; stop(): void } {
  const since = new Map<string, number>();
  const inProgressSeen = new Map<string, number>();
  const timer = setInterval(() => {
    for (const node of nodes) {
      const inProgress = existsSync(h.hostPath(node, IN_PROGRESS));
      if (!inProgress) {
        since.delete(node);
        continue;
      }
      if (!since.has(node)) {
        since.set(node, Date.now());
        inProgressSeen.set(node, (inProgressSeen.get(node) ?? 0) + 1);
      }
      if (options.failing?.has(node)) continue;
      if (Date.now() - since.get(node)! >= options.durationMs) rmSync(h.hostPath(node, REQUIRED), { force: true });
    }
  }, 100);
  return { inProgressSeen, stop: () => clearInterval(timer) };
}

export function requestMaintenance(h: MaintenanceHarness, node: string, path = REQUIRED): void {
  const file = h.hostPath(node, path);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, '');
}

/** The most nodes seen cordoned under the policy's claim at once, over a whole test. */
export async function watchMaintenanceCordons(
  h: MaintenanceHarness,
  policy: string,
): Promise<{
  max(): number;
  cordoned(): string[];
  /**
   * Resolves once no node is seen cordoned under the claim, or after 10 s if some still are. A slot's
   * release uncordons before the status write a test waits for, but on another watch than this one.
   */
  uncordoned(): Promise<void>;
  everCordoned: Set<string>;
  stop(): Promise<void>;
}> {
  const claim = maintenanceClaim(policy);
  const informer = new Informer<V1Node>(apiListWatch(h.cp.kubeConfig, '/api/v1/nodes'), {
    resource: 'maintenance-cordons',
    logger: silentLogger(),
  });
  let max = 0;
  const everCordoned = new Set<string>();
  const cordoned = (): string[] =>
    informer
      .list()
      .filter((n) => n.spec?.unschedulable === true && Object.hasOwn(n.metadata?.annotations ?? {}, claim))
      .map((n) => n.metadata?.name ?? '');
  const seen = (): void => {
    const now = cordoned();
    for (const node of now) everCordoned.add(node);
    max = Math.max(max, now.length);
  };
  informer.on({ add: seen, update: seen, delete: seen });
  informer.start();
  await informer.waitForSync(30_000);
  const uncordoned = async (): Promise<void> => {
    await eventually(
      async () => cordoned(),
      (nodes) => nodes.length === 0,
    );
  };
  return { max: () => max, cordoned, uncordoned, everCordoned, stop: () => informer.stop() };
}
