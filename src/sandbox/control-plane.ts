/**
 * A real, local Kubernetes control plane: etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and kwok, built from upstream modules (`npm run cluster:build`), bound to
 * 127.0.0.1 on free ports, with simulated nodes. The tests, the benchmarks and `npm start` use it.
 * The components' flags are in component-args.ts, the simulated nodes in simulated-nodes.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, VersionApi } from '@kubernetes/client-node';
import { findBinaries, type Binaries } from './binaries.js';
import {
  AUDIT_POLICY,
  apiserverArgs,
  auditArgs,
  type ControlPlanePorts,
  controllerManagerArgs,
  etcdArgs,
  kwokArgs,
  type NodeHeartbeat,
  schedulerArgs,
} from './component-args.js';
import { ComponentGroup, PortClashError } from './component-group.js';
import { loadTls } from './http-probe.js';
import { kwokConfigYaml, simulatedLogFile } from './kwok-stages.js';
import { createPki, writeKubeconfig, type Pki } from './pki.js';
import { freePorts } from './ports.js';
import { type Component, reapStaleRuns } from './processes.js';
import { addSimulatedNodes, nodeList, type SimulatedNode } from './simulated-nodes.js';
import { waitForList } from '../kube/wait.js';

export type { SimulatedNode } from './simulated-nodes.js';

export interface ControlPlaneOptions {
  /** A count (named `node-0` …) or explicit nodes; all are Ready when start resolves. */
  nodes?: number | SimulatedNode[];
  /** Default time each simulated pod phase takes (init containers, then main containers). */
  podDurationMs?: number;
  /** Where run directories go; defaults to /dev/shm (tmpfs) when present. */
  baseDir?: string;
  /** Component log verbosity (klog -v). */
  verbosity?: number;
  /** Keep the run directory (logs, certs) after stop(). */
  keepRunDir?: boolean;
  /** A directory holding all the binaries; defaults to KUBEBUILDER_ASSETS, then the build cache. */
  assetsDir?: string;
  /** Called with each start-up step, for progress output. */
  onProgress?: (message: string) => void;
  /**
   * Have the API server write an audit log of write requests (Metadata level, one JSON event per
   * line) to `auditLogPath`, for counting who writes what (the benchmarks). Off by default: it
   * costs a synchronous file write per request.
   */
  auditLog?: boolean;
  /** How the simulated nodes heartbeat and how long the node lifecycle controller waits for them (default: Kubernetes'). */
  heartbeat?: NodeHeartbeat;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ControlPlane {
  runDir: string;
  server: string;
  kubeconfigPath: string;
  kubeconfigYaml: string;
  kubeConfig: KubeConfig;
  binaries: Binaries;
  /** The API server's audit log, when `auditLog` was asked for. */
  auditLogPath?: string;
  /** Milliseconds from the start call until every node was Ready. */
  startupMs: number;
  /** Pids of the component processes (each leads its own process group). */
  pids: number[];
  /** The component processes running now, by name (a restarted one under its new pid): the benchmarks read their CPU. */
  processes(): { name: string; pid: number }[];
  /** Runs the control plane's own kubectl against it. */
  kubectl(args: string[], options?: { input?: string }): Promise<KubectlResult>;
  /** Adds simulated nodes and waits until they are Ready. */
  addNodes(nodes: SimulatedNode[]): Promise<void>;
  /** Stops one component and starts it with the same flags, ports and data; its clients must reconnect. */
  restart(component: RestartableComponent): Promise<void>;
  stop(): Promise<void>;
}
export type RestartableComponent = 'etcd' | 'kube-apiserver';

const START_TIMEOUT_MS = 60_000;

/** SKYHOOK_SANDBOX_BASE, when set, names the base instead: a test run keeps its sandboxes in its own directory. */
function defaultBaseDir(): string {
  if (process.env.SKYHOOK_SANDBOX_BASE) return process.env.SKYHOOK_SANDBOX_BASE;
  return join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'skyhook-ts-sandbox');
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const attempts = 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      // Free ports are picked ahead of binding, so another process may take one: start afresh.
      const retryable = error instanceof PortClashError;
      if (!retryable || attempt >= attempts) throw error;
      options.onProgress?.(`port clash (${(error as Error).message}); retrying the start`);
    }
  }
}

/** A fresh run directory (with logs/ and the owner's pid) under `baseDir`, after reaping dead runs there. */
function makeRunDir(baseDir: string): string {
  mkdirSync(baseDir, { recursive: true });
  reapStaleRuns(baseDir);
  const runDir = mkdtempSync(join(baseDir, 'run-'));
  mkdirSync(join(runDir, 'logs'));
  writeFileSync(join(runDir, 'owner'), String(process.pid));
  return runDir;
}

async function pickPorts(): Promise<ControlPlanePorts> {
  const [etcd, peer, api, kcm, scheduler, kwok] = (await freePorts(6)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { etcd, peer, api, kcm, scheduler, kwok };
}

/** The parts of a started control plane the handle needs beyond the options. */
interface Started {
  runDir: string;
  server: string;
  kubeconfigPath: string;
  kubeconfigYaml: string;
  kubeConfig: KubeConfig;
  binaries: Binaries;
  startupMs: number;
  auditLogPath: string | undefined;
  group: ComponentGroup;
  probes: Record<RestartableComponent, string>;
}

async function startOnce(options: ControlPlaneOptions): Promise<ControlPlane> {
  const started = Date.now();
  const progress = options.onProgress ?? (() => undefined);
  const binaries = findBinaries(
    options.assetsDir ? { ...process.env, KUBEBUILDER_ASSETS: options.assetsDir } : process.env,
  );
  const runDir = makeRunDir(options.baseDir ?? defaultBaseDir());
  const v = String(options.verbosity ?? 1);
  const group = new ComponentGroup(runDir, binaries, START_TIMEOUT_MS, (name) =>
    progress(`${name} ready (${((Date.now() - started) / 1000).toFixed(1)} s)`),
  );

  try {
    const pki = await createPki(runDir);
    const ports = await pickPorts();
    const server = `https://127.0.0.1:${ports.api}`;
    const kubeconfigPath = join(runDir, 'kubeconfig');
    const kubeconfigYaml = await writeKubeconfig(kubeconfigPath, server, pki);
    group.tls = loadTls({ ca: pki.caCert, cert: pki.adminCert, key: pki.adminKey });

    await group.healthy(group.start('etcd', etcdArgs(runDir, ports)), `http://127.0.0.1:${ports.etcd}/health`);
    const { apiserver, auditLogPath } = startApiserver(group, runDir, ports, pki, options.auditLog, v);
    await group.healthy(apiserver, `${server}/readyz`);
    const probes: Record<RestartableComponent, string> = {
      etcd: `http://127.0.0.1:${ports.etcd}/health`,
      'kube-apiserver': `${server}/readyz`,
    };

    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    await waitForList(
      kubeConfig,
      '/api/v1/namespaces',
      (ns) => ns.some((n) => n.metadata?.name === 'default'),
      START_TIMEOUT_MS,
      'namespace default',
    );
    // Simulated nodes report the API server's version as their kubelet's.
    const { gitVersion: kubeletVersion } = await kubeConfig.makeApiClient(VersionApi).getCode();
    const sim = { podDurationMs: options.podDurationMs, kubeletVersion, heartbeat: options.heartbeat };
    await startControllers(group, runDir, kubeconfigPath, ports, pki, sim, v);
    group.assertAllRunning();
    await addSimulatedNodes(kubeConfig, nodeList(options.nodes), START_TIMEOUT_MS);
    const startupMs = Date.now() - started;
    progress(
      `control plane ready with ${nodeList(options.nodes).length} node(s) in ${(startupMs / 1000).toFixed(1)} s`,
    );
    const up = { runDir, server, kubeconfigPath, kubeconfigYaml, kubeConfig, binaries, startupMs, auditLogPath };
    return controlPlaneHandle(options, { ...up, group, probes });
  } catch (error) {
    await group.stopAll();
    const message = error instanceof Error ? error.message : String(error);
    const wrapped =
      error instanceof PortClashError
        ? error
        : new Error(`control plane failed to start: ${message}\n  component logs are kept in ${join(runDir, 'logs')}`);
    if (error instanceof PortClashError) rmSync(runDir, { recursive: true, force: true });
    throw wrapped;
  }
}

/** Starts the API server, with an audit log of writes when asked for. */
function startApiserver(
  group: ComponentGroup,
  runDir: string,
  ports: ControlPlanePorts,
  pki: Pki,
  auditLog: boolean | undefined,
  v: string,
): { apiserver: Component; auditLogPath: string | undefined } {
  const auditLogPath = auditLog ? join(runDir, 'audit.log') : undefined;
  const extra: string[] = [];
  if (auditLogPath) {
    const policyPath = join(runDir, 'audit-policy.yaml');
    writeFileSync(policyPath, AUDIT_POLICY);
    extra.push(...auditArgs(policyPath, auditLogPath));
  }
  return { apiserver: group.start('kube-apiserver', apiserverArgs(runDir, ports, pki, extra, v)), auditLogPath };
}

/** kube-controller-manager, kube-scheduler and kwok: started together, waited for together. */
async function startControllers(
  group: ComponentGroup,
  runDir: string,
  kubeconfigPath: string,
  ports: ControlPlanePorts,
  pki: Pki,
  sim: { podDurationMs: number | undefined; kubeletVersion: string; heartbeat: NodeHeartbeat | undefined },
  v: string,
): Promise<void> {
  const kcm = group.start(
    'kube-controller-manager',
    controllerManagerArgs(kubeconfigPath, ports, pki, v, sim.heartbeat),
  );
  const scheduler = group.start('kube-scheduler', schedulerArgs(kubeconfigPath, ports, v));
  const kwokConfig = join(runDir, 'kwok.yaml');
  const logsFile = join(runDir, 'simulated-container.log');
  writeFileSync(logsFile, simulatedLogFile());
  writeFileSync(
    kwokConfig,
    kwokConfigYaml({ podDurationMs: sim.podDurationMs ?? 1000, logsFile, kubeletVersion: sim.kubeletVersion }),
  );
  const kwok = group.start('kwok', kwokArgs(kubeconfigPath, kwokConfig, ports, pki, v, sim.heartbeat));
  await Promise.all([
    group.healthy(kcm, `https://127.0.0.1:${ports.kcm}/healthz`, {}),
    group.healthy(scheduler, `https://127.0.0.1:${ports.scheduler}/healthz`, {}),
    group.healthy(kwok, `http://127.0.0.1:${ports.kwok}/healthz`, {}),
  ]);
}

function controlPlaneHandle(options: ControlPlaneOptions, up: Started): ControlPlane {
  const { runDir, kubeconfigPath, binaries, auditLogPath, group } = up;
  let stopped = false;
  return {
    runDir,
    server: up.server,
    kubeconfigPath,
    kubeconfigYaml: up.kubeconfigYaml,
    kubeConfig: up.kubeConfig,
    binaries,
    startupMs: up.startupMs,
    ...(auditLogPath ? { auditLogPath } : {}),
    pids: group.components.map((c) => c.pid),
    processes: () => group.components.map((c) => ({ name: c.name, pid: c.pid })),
    kubectl: (args, opts) => runKubectl(binaries.kubectl, kubeconfigPath, args, opts?.input),
    addNodes: (nodes) => addSimulatedNodes(up.kubeConfig, nodes, START_TIMEOUT_MS),
    async restart(name) {
      if (stopped) throw new Error(`cannot restart ${name}: not running`);
      await group.restart(name, up.probes[name]);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await group.stopAll();
      if (!options.keepRunDir) rmSync(runDir, { recursive: true, force: true });
    },
  };
}

function runKubectl(kubectl: string, kubeconfig: string, args: string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolveRun) => {
    const child = execFile(
      kubectl,
      [`--kubeconfig=${kubeconfig}`, ...args],
      { maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error
          ? typeof (error as { code?: unknown }).code === 'number'
            ? (error as { code: number }).code
            : 1
          : 0;
        resolveRun({ code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

export type { Pki };
