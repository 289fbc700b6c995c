/**
 * What the NodeOp e2e files share: a control plane with the NodeOp CRD, the operator's manager
 * running only the NodeOp controller in this process (restartable), the simulated host side of
 * interrupts, and watchers that record what happened to Jobs over a whole test.
 */
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type V1Job } from '@kubernetes/client-node';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_GROUP, API_VERSION, CHILD_LABELS, GROUP_VERSION } from '../../src/api/names.js';
import type { NodeOp, NodeOpSpec } from '../../src/api/nodeop.js';
import { nodeOpControllerFactory } from '../../src/controllers/nodeop/controller.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { e2eOperatorLogger } from './e2e-logger.js';
import { startManager, type Manager } from '../../src/kube/manager.js';
import { waitForList } from '../../src/kube/wait.js';
import { startControlPlane, type ControlPlane, type SimulatedNode } from '../../src/sandbox/control-plane.js';
import { startSimulatedHost, type SimulatedHost, type SimulatedHostOptions } from '../../src/sandbox/simulated-host.js';
import type { NodeOpSettings } from '../../src/templates/nodeop-settings.js';
import { waitCrdsEstablished } from '../../src/sandbox/crds-established.js';

const CRD = join(fileURLToPath(new URL('../../', import.meta.url)), 'config/crd/skyhook.nvidia.com_nodeops.yaml');

export interface NodeOpHarness {
  cp: ControlPlane;
  core: CoreV1Api;
  batch: BatchV1Api;
  custom: CustomObjectsApi;
  host: SimulatedHost;
  /**
   * Stops the running operator and starts a fresh one (new caches, no memory of the old one); with
   * `settings`, the new one runs with these on top of the harness's.
   */
  restartOperator(settings?: Partial<NodeOpSettings>): Promise<void>;
  stopOperator(): Promise<void>;
  startOperator(settings?: Partial<NodeOpSettings>): Promise<void>;
  stop(): Promise<void>;
}

export async function startNodeOpHarness(
  nodes: SimulatedNode[],
  options: { settings?: Partial<NodeOpSettings>; host?: SimulatedHostOptions; podDurationMs?: number } = {},
): Promise<NodeOpHarness> {
  const cp = await startControlPlane({ nodes, podDurationMs: options.podDurationMs ?? 300 });
  const applied = await cp.kubectl(['apply', '--server-side', '-f', CRD]);
  if (applied.code !== 0) throw new Error(applied.stderr);
  await waitCrdsEstablished(cp, ['crd/nodeops.skyhook.nvidia.com']);
  const kc = cp.kubeConfig;
  const host = await startSimulatedHost(kc, options.host);
  let manager: Manager | undefined;
  let generation = 0;
  const startOperator = async (settings: Partial<NodeOpSettings> = {}): Promise<void> => {
    manager = await startManager({
      kc,
      logger: e2eOperatorLogger(),
      namespace: 'default',
      identity: `nodeop-e2e-${++generation}`,
      leaderElect: false,
      leaseName: 'nodeop-e2e',
      health: { host: '127.0.0.1', port: 0 },
      metrics: { host: '127.0.0.1', port: 0 },
      controllers: [
        nodeOpControllerFactory({
          // Every namespace's NodeOps run (NODEOP_NAMESPACES=*): the tests put each case in a namespace of its own.
          settings: {
            stuckPodTimeoutMs: 15_000,
            rebootTimeoutMs: 60_000,
            extraNamespaces: ['*'],
            ...options.settings,
            ...settings,
          },
        }),
      ],
      drainDeadlineMs: 5_000,
    });
  };
  const stopOperator = async (): Promise<void> => {
    await manager?.shutdown();
    manager = undefined;
  };
  await startOperator();
  return {
    cp,
    core: kc.makeApiClient(CoreV1Api),
    batch: kc.makeApiClient(BatchV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    host,
    startOperator,
    stopOperator,
    restartOperator: async (settings?: Partial<NodeOpSettings>) => {
      await stopOperator();
      await startOperator(settings);
    },
    stop: async () => {
      await stopOperator();
      await host.stop();
      await cp.stop();
    },
  };
}

export async function createNamespace(h: NodeOpHarness, name: string): Promise<void> {
  await h.core.createNamespace({ body: { metadata: { name } } });
}

export async function createNodeOp(
  h: NodeOpHarness,
  namespace: string,
  name: string,
  spec: NodeOpSpec,
): Promise<NodeOp> {
  const body = { apiVersion: GROUP_VERSION, kind: 'NodeOp', metadata: { name, namespace }, spec };
  return (await h.custom.createNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: 'nodeops',
    namespace,
    body,
  })) as NodeOp;
}

export async function waitForNodeOp(
  h: NodeOpHarness,
  namespace: string,
  name: string,
  done: (op: NodeOp) => boolean,
  timeoutMs = 60_000,
): Promise<NodeOp> {
  const path = `/apis/${API_GROUP}/${API_VERSION}/namespaces/${namespace}/nodeops`;
  const found = await waitForList<NodeOp>(
    h.cp.kubeConfig,
    path,
    (ops) => ops.some((op) => op.metadata.name === name && done(op)),
    timeoutMs,
    `NodeOp ${namespace}/${name}`,
  );
  return found.find((op) => op.metadata.name === name)!;
}

const isFinished = (job: V1Job): boolean =>
  job.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') ?? false;

/** Watches a namespace's Jobs for a whole test: the most unfinished at once, the order nodes got Jobs, and every Job UID per name. */
export interface JobWatcher {
  maxInFlight: number;
  nodesInOrder: string[];
  /** Date.now() when each Job was first seen. */
  firstSeenAt: Map<string, number>;
  uidsByName: Map<string, Set<string>>;
  stop(): Promise<void>;
}

export async function watchJobs(h: NodeOpHarness, namespace: string): Promise<JobWatcher> {
  const informer = new Informer<V1Job>(apiListWatch(h.cp.kubeConfig, `/apis/batch/v1/namespaces/${namespace}/jobs`), {
    resource: `jobs-${namespace}`,
    logger: silentLogger(),
  });
  const state: JobWatcher = {
    maxInFlight: 0,
    nodesInOrder: [],
    firstSeenAt: new Map(),
    uidsByName: new Map(),
    stop: () => informer.stop(),
  };
  const seen = (job: V1Job): void => {
    const name = job.metadata?.name ?? '';
    const uids = state.uidsByName.get(name) ?? new Set<string>();
    if (uids.size === 0) {
      state.nodesInOrder.push(job.metadata?.labels?.[CHILD_LABELS.node] ?? '?');
      state.firstSeenAt.set(name, Date.now());
    }
    uids.add(job.metadata?.uid ?? '');
    state.uidsByName.set(name, uids);
    state.maxInFlight = Math.max(state.maxInFlight, informer.list().filter((j) => !isFinished(j)).length);
  };
  informer.on({ add: seen, update: seen });
  informer.start();
  await informer.waitForSync(30_000);
  return state;
}
