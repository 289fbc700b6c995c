/**
 * What the Skyhook e2e files share: a control plane with all CRDs and the operator namespace, the
 * operator's manager running the NodeOp and Skyhook controllers in this process, SCRs applied from
 * files or objects, and (from skyhook-cluster.ts, re-exported) waits on SCR status and nodes with
 * watches, and a recorder of every stage Job (node, stage, UID) for a whole test.
 */
import { CoreV1Api, CustomObjectsApi, type V1Node } from '@kubernetes/client-node';
import type { DeploymentPolicySpec } from '../../src/api/deployment-policy.js';
import { API_GROUP, API_VERSION, KINDS } from '../../src/api/names.js';
import type { Package, Skyhook } from '../../src/api/skyhook.js';
import { nodeOpControllerFactory } from '../../src/controllers/nodeop/controller.js';
import {
  skyhookControllerFactory,
  type SkyhookControllerOptions,
} from '../../src/controllers/skyhook/skyhook-controller.js';
import { retryOnConflict } from './conflict-retry.js';
import type { Logger } from '../../src/kube/logger.js';
import { e2eOperatorLogger } from './e2e-logger.js';
import type { ControllerFactory } from '../../src/kube/runtime.js';
import type { NodeOpSettings } from '../../src/templates/nodeop-settings.js';
import { startManager, type Manager } from '../../src/kube/manager.js';
import { startSimulatedHost, type SimulatedHostOptions, type SimulatedHost } from '../../src/sandbox/simulated-host.js';
import { startControlPlane, type ControlPlane, type SimulatedNode } from '../../src/sandbox/control-plane.js';
import { installOperatorPrerequisites, NAMESPACE } from './skyhook-cluster.js';

export * from './skyhook-cluster.js';

export const DEMO_LABEL = { 'skyhook.nvidia.com/test-node': 'demo' };

export interface SkyhookHarness {
  cp: ControlPlane;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  manager(): Manager | undefined;
  startOperator(): Promise<void>;
  stopOperator(): Promise<void>;
  /** The simulated host side of interrupts, when asked for with `simulatedHost`. */
  host?: SimulatedHost;
  stop(): Promise<void>;
}

/** `labelled` nodes carry the demo label, `unlabelled` do not. */
export function demoNodes(labelled: number, unlabelled: number): SimulatedNode[] {
  return [
    ...Array.from({ length: labelled }, (_, i) => ({ name: `demo-${i}`, labels: { ...DEMO_LABEL } })),
    ...Array.from({ length: unlabelled }, (_, i) => ({ name: `other-${i}` })),
  ];
}

/** The label that puts simulated nodes in a test's own group, so each case selects only its nodes. */
export const GROUP_LABEL = 'skyhook.nvidia.com/test-group';

/** `count` nodes `<group>-<i>` labelled with the group (plus `labels(i)`, which may override it). */
export function groupNodes(
  group: string,
  count: number,
  labels: (i: number) => Record<string, string> = () => ({}),
): SimulatedNode[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `${group}-${i}`,
    labels: { [GROUP_LABEL]: group, ...labels(i) },
  }));
}

/** A Skyhook selecting the nodes of `group`. */
export async function createGroupSkyhook(
  h: SkyhookHarness,
  name: string,
  group: string,
  spec: Partial<Skyhook['spec']>,
): Promise<void> {
  await createSkyhook(h, {
    metadata: { name },
    spec: { nodeSelectors: { matchLabels: { [GROUP_LABEL]: group } }, ...spec },
  });
}

export async function startSkyhookHarness(
  nodes: SimulatedNode[],
  options: HarnessOptions = {},
): Promise<SkyhookHarness> {
  const cp = await startControlPlane({ nodes, podDurationMs: options.podDurationMs ?? 250 });
  try {
    return await prepareSkyhookHarness(cp, options);
  } catch (e) {
    await cp.stop(); // the caller never gets a harness to stop
    throw e;
  }
}

export interface HarnessOptions {
  podDurationMs?: number;
  operatorInProcess?: boolean;
  skyhook?: SkyhookControllerOptions;
  /** Start the simulated host side of interrupts (reboots, service restarts) with these options. */
  simulatedHost?: SimulatedHostOptions;
  /** The operator's logger (default: silent); a test that reads the operator's log passes its own. */
  logger?: Logger;
  /** NodeOp settings beyond the harness's short stuck-pod timeout (real nodes: the sentinel image). */
  nodeOpSettings?: Partial<NodeOpSettings>;
  /** Controllers the operator runs besides the NodeOp and Skyhook ones (e.g. the DisruptionBudget status). */
  extraControllers?: ControllerFactory[];
}

/** CRDs, namespace and operator on an already running control plane (startSkyhookHarness's second half). */
export async function prepareSkyhookHarness(cp: ControlPlane, options: HarnessOptions): Promise<SkyhookHarness> {
  await installOperatorPrerequisites(cp);
  const kc = cp.kubeConfig;
  const core = kc.makeApiClient(CoreV1Api);
  let manager: Manager | undefined;
  let generation = 0;
  const startOperator = async (): Promise<void> => {
    manager = await startManager({
      kc,
      logger: options.logger ?? e2eOperatorLogger(),
      namespace: NAMESPACE,
      identity: `skyhook-e2e-${++generation}`,
      leaderElect: false,
      leaseName: 'skyhook-e2e',
      health: { host: '127.0.0.1', port: 0 },
      metrics: { host: '127.0.0.1', port: 0 },
      controllers: [
        nodeOpControllerFactory({ settings: { stuckPodTimeoutMs: 15_000, ...options.nodeOpSettings } }),
        skyhookControllerFactory(options.skyhook),
        ...(options.extraControllers ?? []),
      ],
      drainDeadlineMs: 5_000,
    });
  };
  const stopOperator = async (): Promise<void> => {
    await manager?.shutdown();
    manager = undefined;
  };
  if (options.operatorInProcess ?? true) await startOperator();
  const host = options.simulatedHost ? await startSimulatedHost(kc, options.simulatedHost) : undefined;
  return {
    cp,
    ...(host ? { host } : {}),
    core,
    custom: kc.makeApiClient(CustomObjectsApi),
    manager: () => manager,
    startOperator,
    stopOperator,
    stop: async () => {
      await host?.stop();
      await stopOperator();
      await cp.stop();
    },
  };
}

export async function createSkyhook(h: SkyhookHarness, skyhook: Omit<Skyhook, 'apiVersion' | 'kind'>): Promise<void> {
  const body = { apiVersion: `${API_GROUP}/${API_VERSION}`, kind: 'Skyhook', ...skyhook };
  await h.custom.createClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural: 'skyhooks', body });
}

/** Replaces the Skyhook's packages (a user's edit of the SCR), keeping the rest of its spec. */
export async function setSkyhookPackages(
  h: SkyhookHarness,
  name: string,
  packages: Record<string, Package>,
): Promise<void> {
  const ref = { group: API_GROUP, version: API_VERSION, plural: 'skyhooks', name };
  await retryOnConflict(async () => {
    const current = (await h.custom.getClusterCustomObject(ref)) as Skyhook;
    await h.custom.replaceClusterCustomObject({ ...ref, body: { ...current, spec: { ...current.spec, packages } } });
  });
}

export async function createDeploymentPolicy(
  h: SkyhookHarness,
  name: string,
  spec: DeploymentPolicySpec,
): Promise<void> {
  const body = {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: KINDS.deploymentPolicy.kind,
    metadata: { name },
    spec,
  };
  await h.custom.createClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.deploymentPolicy.plural,
    body,
  });
}

export async function listNodes(h: SkyhookHarness): Promise<V1Node[]> {
  return (await h.core.listNode()).items;
}
