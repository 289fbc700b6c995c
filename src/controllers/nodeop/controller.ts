/**
 * The NodeOp controller's wiring: informers over NodeOps, their Jobs and pods (selected by the
 * NodeOp label) and nodes; events mapped to NodeOp keys; the reconciler; and the factory the
 * operator's registry starts.
 */
import type { V1Job, V1Node, V1Pod } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, KINDS, NODEOP_NAMES } from '../../api/names.js';
import type { NodeOp } from '../../api/nodeop.js';
import { cordonedBy } from '../../jobs/cordon/claims.js';
import { systemClock, type Clock } from '../../kube/clock.js';
import { Controller, ownerKeys } from '../../kube/controller.js';
import { objectKey, type Informer } from '../../kube/informer.js';
import { customResourcePath } from '../../kube/list-watch.js';
import type { OperatorRuntime } from '../../kube/runtime.js';
import { readNodeOpSettings, type NodeOpSettings } from '../../templates/nodeop-settings.js';
import type { ControllerFactory, Stoppable } from '../../kube/runtime.js';
import { cachedJob, cachedNode, cachedNodeOp, cachedNodeOpPod } from '../cached-objects.js';
import { selectorMatches } from '../../api/label-selector.js';
import type { DisruptionArbiter } from '../disruption/arbiter.js';
import { sharedDisruption } from '../disruption/shared-arbiter.js';
import { DrainTasks } from './drain-tasks.js';
import { StageMetrics } from './stage-metrics.js';
import { bootIdOf, isNodeReady } from './node-status.js';
import { NodeOpReconciler } from './reconciler.js';
import { nameOf } from '../../api/object-meta.js';

export interface NodeOpControllerOptions {
  /** Overrides of the settings read from the environment (tests shorten timeouts). */
  settings?: Partial<NodeOpSettings>;
  /** The cluster-wide budgets' arbiter; default: the process's shared one (shared-arbiter.ts). */
  arbiter?: DisruptionArbiter;
  workers?: number;
  clock?: Clock;
  syncTimeoutMs?: number;
}

const nodeOpOwners = ownerKeys(KINDS.nodeOp.kind, { apiGroup: API_GROUP });

/** Node changes a NodeOp acts on: labels (selection), cordon, bootID and readiness (reboots). */
function nodeChangeMatters(node: V1Node, old: V1Node): boolean {
  return (
    JSON.stringify(node.metadata?.labels) !== JSON.stringify(old.metadata?.labels) ||
    node.spec?.unschedulable !== old.spec?.unschedulable ||
    cordonedBy(node) !== cordonedBy(old) ||
    bootIdOf(node) !== bootIdOf(old) ||
    isNodeReady(node) !== isNodeReady(old)
  );
}

/** NodeOps that target `node` or have started on it. */
function nodeOpsOfNode(nodeOps: Informer<NodeOp>, node: V1Node): string[] {
  const name = nameOf(node);
  return nodeOps
    .list()
    .filter(
      (op) =>
        op.status?.nodeStatuses?.[name] !== undefined ||
        (op.spec.targetNodes
          ? op.spec.targetNodes.includes(name)
          : selectorMatches(op.spec.nodeSelector, node.metadata?.labels ?? {})),
    )
    .map(objectKey);
}

export async function startNodeOpController(
  runtime: OperatorRuntime,
  options: NodeOpControllerOptions = {},
): Promise<Stoppable> {
  const { informers, clients, events, logger } = runtime;
  const settings: NodeOpSettings = { ...readNodeOpSettings(process.env), ...options.settings };
  const byNodeOpLabel = { labelSelector: NODEOP_NAMES.nodeOpLabel };
  const nodeOps = informers.informer<NodeOp>(customResourcePath(API_GROUP, API_VERSION, KINDS.nodeOp.plural), {
    transform: cachedNodeOp,
  });
  // Trimmed to what the reconciler reads (cached-objects.ts): most of a Job or pod is its pod spec.
  const jobs = informers.informer<V1Job>('/apis/batch/v1/jobs', { ...byNodeOpLabel, transform: cachedJob });
  const pods = informers.informer<V1Pod>('/api/v1/pods', { ...byNodeOpLabel, transform: cachedNodeOpPod });
  const nodes = informers.informer<V1Node>('/api/v1/nodes', { transform: cachedNode });
  const syncTimeoutMs = options.syncTimeoutMs ?? 120_000;
  await Promise.all([nodeOps, jobs, pods, nodes].map((i) => i.waitForSync(syncTimeoutMs)));
  const arbiter = options.arbiter ?? (await sharedDisruption(runtime, syncTimeoutMs)).arbiter;

  const log = logger.child({ controller: 'nodeop' });
  const drains = new DrainTasks();
  const podNamespace = process.env['POD_NAMESPACE'];
  const podName = process.env['POD_NAME'];
  let controller: Controller | undefined;
  const reconciler = new NodeOpReconciler({
    clients,
    caches: { jobs, pods, nodes },
    events,
    logger: log,
    settings,
    clock: options.clock ?? systemClock,
    drains,
    stageMetrics: new StageMetrics(runtime.metrics.registry),
    enqueue: (key) => controller?.queue.add(key),
    arbiter,
    ...(podNamespace && podName ? { ownPod: `${podNamespace}/${podName}` } : {}),
  });
  controller = new Controller({
    name: 'nodeop',
    reconcile: reconciler.reconcile,
    workers: options.workers ?? 4,
    logger,
    metrics: runtime.metrics,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const queue = controller.queue;

  controller.watch(nodeOps).watch(jobs, nodeOpOwners);
  // Reboot pods belong to the NodeOp; Job pods to a Job, whose owner is the NodeOp.
  controller.watch(pods, (pod) => {
    const direct = nodeOpOwners(pod);
    if (direct.length > 0) return direct;
    return (pod.metadata?.ownerReferences ?? [])
      .filter((ref) => ref.kind === 'Job')
      .flatMap((ref) => {
        const job = jobs.get(ref.name, pod.metadata?.namespace);
        return job ? nodeOpOwners(job) : [];
      });
  });
  const enqueueAll = (keys: Iterable<string>): void => {
    for (const key of keys) queue.add(key);
  };
  nodes.on({
    add: (node) => enqueueAll(nodeOpsOfNode(nodeOps, node)),
    update: (node, old) => {
      if (node === old || nodeChangeMatters(node, old)) enqueueAll(nodeOpsOfNode(nodeOps, node));
    },
    delete: (node) => enqueueAll(nodeOpsOfNode(nodeOps, node)),
  });
  controller.start();

  return {
    stop: async (deadlineMs: number) => {
      const stopped = controller.stop(deadlineMs);
      drains.abort();
      return stopped;
    },
  };
}

export function nodeOpControllerFactory(options: NodeOpControllerOptions = {}): ControllerFactory {
  return { name: 'nodeop', start: (runtime) => startNodeOpController(runtime, options) };
}
