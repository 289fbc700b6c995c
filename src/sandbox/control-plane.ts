/**
 * A real, local Kubernetes control plane: etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and kwok, built from upstream modules (`npm run cluster:build`), bound to
 * 127.0.0.1 on free ports, with simulated nodes. The tests, the benchmarks and `npm start` use it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import pLimit from 'p-limit';
import { findBinaries, type Binaries } from './binaries.js';
import { loadTls, waitHealthy } from './http-probe.js';
import { kwokConfigYaml, simulatedLogFile } from './kwok-stages.js';
import { createPki, writeKubeconfig, type Pki } from './pki.js';
import { freePorts } from './ports.js';
import { reapStaleRuns, startComponent, stopComponent, type Component } from './processes.js';
import { waitForList } from '../kube/wait.js';
import { SANDBOX_NAMES } from '../api/names.js';

export interface SimulatedNode {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  taints?: { key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }[];
}

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
/** Node creations in flight at once: a thousand at a time would swamp a small machine's API server. */
const NODE_CREATE_CONCURRENCY = 50;
/** Extra time to wait for Ready per node beyond the first START_TIMEOUT_MS worth. */
const READY_MS_PER_NODE = 100;

/** Only writes, and only who/what/when (no bodies): enough to count an actor's API writes. */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`;

function defaultBaseDir(): string {
  return join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'skyhook-ts-sandbox');
}

function nodeList(nodes: ControlPlaneOptions['nodes']): SimulatedNode[] {
  if (Array.isArray(nodes)) return nodes;
  return Array.from({ length: nodes ?? 0 }, (_, i) => ({ name: `node-${i}` }));
}

function isReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
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

class PortClashError extends Error {}

async function startOnce(options: ControlPlaneOptions): Promise<ControlPlane> {
  const started = Date.now();
  const progress = options.onProgress ?? (() => undefined);
  const binaries = findBinaries(
    options.assetsDir ? { ...process.env, KUBEBUILDER_ASSETS: options.assetsDir } : process.env,
  );
  const baseDir = options.baseDir ?? defaultBaseDir();
  mkdirSync(baseDir, { recursive: true });
  reapStaleRuns(baseDir);
  const runDir = mkdtempSync(join(baseDir, 'run-'));
  mkdirSync(join(runDir, 'logs'));
  writeFileSync(join(runDir, 'owner'), String(process.pid));
  const v = String(options.verbosity ?? 1);
  const components: Component[] = [];
  const stopAll = async (): Promise<void> => {
    for (const component of [...components].reverse()) await stopComponent(component);
  };

  try {
    const pki = await createPki(runDir);
    const [etcdPort, peerPort, apiPort, kcmPort, schedulerPort, kwokPort] = (await freePorts(6)) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const server = `https://127.0.0.1:${apiPort}`;
    const kubeconfigPath = join(runDir, 'kubeconfig');
    const kubeconfigYaml = await writeKubeconfig(kubeconfigPath, server, pki);
    const admin = loadTls({ ca: pki.caCert, cert: pki.adminCert, key: pki.adminKey });
    const argsOf = new Map<string, string[]>();
    const start = (name: keyof Binaries, args: string[]): Component => {
      const component = startComponent(runDir, name, binaries[name], args);
      components.push(component);
      argsOf.set(name, args);
      return component;
    };
    const clashCheck = (component: Component): void => {
      const log = existsSync(component.logFile) ? readFileSync(component.logFile, 'utf8') : '';
      if (/address already in use/.test(log)) throw new PortClashError(`${component.name}: address already in use`);
    };
    const healthy = async (component: Component, url: string, tls = admin): Promise<void> => {
      try {
        await waitHealthy(component, url, START_TIMEOUT_MS, tls);
      } catch (error) {
        clashCheck(component);
        throw error;
      }
      progress(`${component.name} ready (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    };

    const etcd = start('etcd', [
      '--name=default',
      `--data-dir=${join(runDir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync',
      '--quota-backend-bytes=4294967296',
      '--auto-compaction-retention=1',
      '--log-level=warn',
    ]);
    await healthy(etcd, `http://127.0.0.1:${etcdPort}/health`);

    const auditLogPath = options.auditLog ? join(runDir, 'audit.log') : undefined;
    const auditArgs: string[] = [];
    if (auditLogPath) {
      const policyPath = join(runDir, 'audit-policy.yaml');
      writeFileSync(policyPath, AUDIT_POLICY);
      auditArgs.push(
        `--audit-policy-file=${policyPath}`,
        `--audit-log-path=${auditLogPath}`,
        '--audit-log-format=json',
        '--audit-log-maxsize=0',
      );
    }
    const apiserver = start('kube-apiserver', [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      `--cert-dir=${join(runDir, 'apiserver-certs')}`,
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      '--advertise-address=127.0.0.1',
      '--endpoint-reconciler-type=none',
      '--service-cluster-ip-range=10.96.0.0/16',
      '--authorization-mode=RBAC',
      '--allow-privileged=true',
      // Pods may name a ServiceAccount before its controller has made the namespace's default one.
      '--disable-admission-plugins=ServiceAccount',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      '--kubelet-preferred-address-types=InternalIP',
      `--kubelet-client-certificate=${pki.adminCert}`,
      `--kubelet-client-key=${pki.adminKey}`,
      ...auditArgs,
      `--v=${v}`,
    ]);
    await healthy(apiserver, `${server}/readyz`);
    const probes: Record<RestartableComponent, string> = {
      etcd: `http://127.0.0.1:${etcdPort}/health`,
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

    const kcm = start('kube-controller-manager', [
      `--kubeconfig=${kubeconfigPath}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${kcmPort}`,
      '--controllers=job-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,' +
        'pod-garbage-collector-controller,ttl-after-finished-controller,disruption-controller,' +
        'node-lifecycle-controller,root-ca-certificate-publisher-controller,deployment-controller,replicaset-controller,daemonset-controller',
      `--root-ca-file=${pki.caCert}`,
      `--service-account-private-key-file=${pki.serviceAccountKey}`,
      '--kube-api-qps=200',
      '--kube-api-burst=400',
      `--v=${v}`,
    ]);
    const scheduler = start('kube-scheduler', [
      `--kubeconfig=${kubeconfigPath}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${schedulerPort}`,
      `--v=${v}`,
    ]);
    const kwokConfig = join(runDir, 'kwok.yaml');
    const logsFile = join(runDir, 'simulated-container.log');
    writeFileSync(logsFile, simulatedLogFile());
    writeFileSync(kwokConfig, kwokConfigYaml({ podDurationMs: options.podDurationMs ?? 1000, logsFile }));
    const kwok = start('kwok', [
      `--kubeconfig=${kubeconfigPath}`,
      `--config=${kwokConfig}`,
      // Only the simulated nodes: real nodes (sandbox/real-node/) have kubelets of their own.
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${SANDBOX_NAMES.simulatedNodeAnnotation}=fake`,
      '--node-ip=127.0.0.1',
      `--node-port=${kwokPort}`,
      `--server-address=127.0.0.1:${kwokPort}`,
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      '--cidr=10.244.0.0/16',
      '--node-lease-duration-seconds=40',
      `--v=${v}`,
    ]);
    await Promise.all([
      healthy(kcm, `https://127.0.0.1:${kcmPort}/healthz`, {}),
      healthy(scheduler, `https://127.0.0.1:${schedulerPort}/healthz`, {}),
      healthy(kwok, `http://127.0.0.1:${kwokPort}/healthz`, {}),
    ]);

    const core = kubeConfig.makeApiClient(CoreV1Api);
    const addNodes = async (nodes: SimulatedNode[]): Promise<void> => {
      if (nodes.length === 0) return;
      const limit = pLimit(NODE_CREATE_CONCURRENCY);
      await Promise.all(
        nodes.map((node) =>
          limit(() =>
            core.createNode({
              body: {
                apiVersion: 'v1',
                kind: 'Node',
                metadata: {
                  name: node.name,
                  labels: {
                    'kubernetes.io/hostname': node.name,
                    'kubernetes.io/os': 'linux',
                    type: 'kwok',
                    [SANDBOX_NAMES.nodeKindLabel]: 'simulated',
                    ...node.labels,
                  },
                  annotations: { [SANDBOX_NAMES.simulatedNodeAnnotation]: 'fake', ...node.annotations },
                },
                spec: { taints: node.taints },
              },
            }),
          ),
        ),
      );
      const names = new Set(nodes.map((n) => n.name));
      const what = names.size > 10 ? `${names.size} nodes` : `nodes ${[...names].join(', ')}`;
      await waitForList<V1Node>(
        kubeConfig,
        '/api/v1/nodes',
        (all) => all.filter((n) => names.has(n.metadata?.name ?? '') && isReady(n)).length === names.size,
        START_TIMEOUT_MS + names.size * READY_MS_PER_NODE,
        `${what} to be Ready`,
      );
    };
    // A component that lost its port to another process exits after its health check passed
    // against the other one: make sure every component is still ours and running.
    for (const component of components) {
      if (component.child.exitCode !== null || component.child.signalCode !== null) {
        clashCheck(component);
        throw new Error(`${component.name} exited right after start; see ${component.logFile}`);
      }
    }
    await addNodes(nodeList(options.nodes));
    const startupMs = Date.now() - started;
    progress(
      `control plane ready with ${nodeList(options.nodes).length} node(s) in ${(startupMs / 1000).toFixed(1)} s`,
    );

    let stopped = false;
    return {
      runDir,
      server,
      kubeconfigPath,
      kubeconfigYaml,
      kubeConfig,
      binaries,
      startupMs,
      ...(auditLogPath ? { auditLogPath } : {}),
      pids: components.map((c) => c.pid),
      kubectl: (args, opts) => runKubectl(binaries.kubectl, kubeconfigPath, args, opts?.input),
      addNodes,
      async restart(name) {
        const index = components.findIndex((c) => c.name === name);
        if (index < 0 || stopped) throw new Error(`cannot restart ${name}: not running`);
        await stopComponent(components[index]!);
        const fresh = startComponent(runDir, name, binaries[name], argsOf.get(name)!);
        components[index] = fresh;
        await healthy(fresh, probes[name]);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopAll();
        if (!options.keepRunDir) rmSync(runDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopAll();
    const message = error instanceof Error ? error.message : String(error);
    const wrapped =
      error instanceof PortClashError
        ? error
        : new Error(`control plane failed to start: ${message}\n  component logs are kept in ${join(runDir, 'logs')}`);
    if (error instanceof PortClashError) rmSync(runDir, { recursive: true, force: true });
    throw wrapped;
  }
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
