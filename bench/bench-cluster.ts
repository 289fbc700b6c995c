/**
 * What the operator benchmarks share: a control plane with simulated nodes, our CRDs and namespace,
 * the operator as a child process, Skyhooks created with kubectl (so the only client-node writer is
 * the operator), progress on stderr (stdout is the JSON), and everything stopped afterwards.
 */
import { GROUP_VERSION } from '../src/api/names.js';
import type { Package, Skyhook } from '../src/api/skyhook.js';
import { SIM_ENV } from '../src/sandbox/kwok-stages.js';
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from '../src/sandbox/control-plane.js';
import { nodeList } from '../src/sandbox/simulated-nodes.js';
import { getJson } from '../src/kube/wait.js';
import { installOperatorPrerequisites } from '../test/e2e/skyhook-cluster.js';
import { startOperatorProcess, type OperatorProcess } from './operator-process.js';
import { operatorRuntime, type OperatorRuntime } from './operator-runtime.js';
import { benchHeartbeat } from './bench-heartbeat.js';
import type { NodeHeartbeat } from '../src/sandbox/component-args.js';

export interface BenchCluster {
  cp: ControlPlane;
  operator: OperatorProcess;
  /** How the operator runs: its Deployment's NODE_OPTIONS, MALLOC_ARENA_MAX … and memory limit (for the output). */
  runtime: OperatorRuntime;
  /** The simulated nodes' heartbeat settings (bench-heartbeat.ts), for the output. */
  heartbeat: NodeHeartbeat;
}

/** Progress for the person waiting; stdout carries only the benchmark's JSON line. */
export function say(message: string): void {
  console.error(`[bench] ${message}`);
}

/** Runs `body` with a control plane and the operator process, and stops both whatever happens. */
export async function withBenchCluster<T>(
  options: ControlPlaneOptions,
  body: (cluster: BenchCluster) => Promise<T>,
  /** The operator's settings env beside its runtime's (REGISTRY_CA_FILE, IMAGE_PULL_SECRET …). */
  operatorSettings: Record<string, string> = {},
): Promise<T> {
  // BENCH_KEEP_RUN_DIR=1 keeps the audit log and every log, to look into a figure afterwards.
  const keepRunDir = process.env['BENCH_KEEP_RUN_DIR'] === '1';
  const heartbeat = options.heartbeat ?? benchHeartbeat(nodeList(options.nodes).length);
  say(
    `simulated nodes heartbeat with ${heartbeat.leaseDurationSeconds} s leases, ` +
      `${heartbeat.nodeMonitorGracePeriodSeconds} s of grace (bench-heartbeat.ts)`,
  );
  const cp = await startControlPlane({
    ...options,
    heartbeat,
    keepRunDir,
    onProgress: (m) => say(`control plane: ${m}`),
  });
  if (keepRunDir) say(`run directory kept: ${cp.runDir}`);
  let operator: OperatorProcess | undefined;
  try {
    await installOperatorPrerequisites(cp);
    await nodeLifecycleSettled(cp, nodeList(options.nodes).length);
    const runtime = operatorRuntime();
    operator = await startOperatorProcess(cp.runDir, cp.kubeconfigPath, {
      runtimeEnv: runtime.env,
      settingsEnv: operatorSettings,
    });
    say(`operator running (pid ${operator.pid}, log ${operator.logFile}, ${JSON.stringify(runtime.env)})`);
    return await body({ cp, operator, runtime, heartbeat });
  } finally {
    await operator?.stop();
    await cp.stop();
  }
}

/**
 * Waits until the node lifecycle controller has announced every node (one `RegisteredNode` Event
 * each, a few seconds after kube-controller-manager starts), so those writes of the cluster's own
 * start are not counted as the rollout's. Gives up after two minutes and says so.
 */
async function nodeLifecycleSettled(cp: ControlPlane, nodes: number): Promise<void> {
  const started = Date.now();
  const path = '/api/v1/events?fieldSelector=reason%3DRegisteredNode';
  while (Date.now() - started < 120_000) {
    const { items } = await getJson<{ items: unknown[] }>(cp.kubeConfig, path);
    if (items.length >= nodes) {
      say(
        `node lifecycle controller settled (${items.length} RegisteredNode Events) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      return;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  say("node lifecycle controller has not announced every node after 120 s; its Events may be counted as the rollout's");
}

/** A package whose every stage Job takes about 2 × `phase` (init phase, then main phase; see kwok-stages.ts). */
export function simulatedPackage(phase: string): Package {
  return {
    version: '1.0.0',
    image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
    env: [{ name: SIM_ENV.duration, value: phase }],
  };
}

/** Creates the Skyhooks in one kubectl call (its own User-Agent, so its writes are not counted as the operator's). */
export async function createSkyhooks(
  cp: ControlPlane,
  skyhooks: Omit<Skyhook, 'apiVersion' | 'kind'>[],
): Promise<void> {
  const items = skyhooks.map((s) => ({ apiVersion: GROUP_VERSION, kind: 'Skyhook', ...s }));
  const created = await cp.kubectl(['create', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
  });
  if (created.code !== 0) throw new Error(`creating the Skyhooks failed: ${created.stderr}`);
}
