/**
 * The NodeOp controller's wiring: informers over NodeOps, their Jobs and pods (selected by the
 * NodeOp label) and nodes; events mapped to NodeOp keys; the reconciler; and the factory the
 * operator's registry starts.
 */
import type { V1Job, V1Node, V1Pod } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, CHILD_LABELS, KINDS, KUBERNETES_NAMES, NODEOP_NAMES } from '../../api/names.js';
import type { NodeOp } from '../../api/nodeop.js';
import { cordonedBy } from '../../jobs/cordon/claims.js';
import { systemClock, type Clock } from '../../kube/clock.js';
import { Controller, ownerKeys, ownKey, parseKey } from '../../kube/controller.js';
import { CustomObjects } from '../../kube/custom-objects.js';
import { objectKey, type Informer } from '../../kube/informer.js';
import { ignoreNotFound } from '../../kube/writes.js';
import { customResourcePath } from '../../kube/list-watch.js';
import type { OperatorRuntime } from '../../kube/runtime.js';
import { readNodeOpSettings, readNodeOpWorkers, type NodeOpSettings } from '../../templates/nodeop-settings.js';
import type { ControllerFactory, Stoppable } from '../../kube/runtime.js';
import { cachedJob, cachedNode, cachedNodeOpPod } from '../cached-objects.js';
import { cachedNodeOp } from '../cached-nodeops.js';
import type { DisruptionArbiter } from '../disruption/arbiter.js';
import { sharedDisruption } from '../disruption/shared-arbiter.js';
import type { NodeOpCaches } from './context.js';
import { DrainTasks } from './drain-tasks.js';
import { StageMetrics } from './stage-metrics.js';
import { bootIdOf, isNodeReady } from './node-status.js';
import { NodeOpReconciler } from './reconciler.js';
import { addNodeOpIndexes, NodeOpsByNode, PodsByJob } from './cache-indexes.js';
import {
  isOnlyFinish,
  isSucceededPod,
  jobChanged,
  jobHasNews,
  mayStartNodes,
  podChanged,
  podHasNews,
} from './event-filters.js';
import { NodeOpReads } from './nodeop-reads.js';
import { namespaceGate } from './namespace-gate.js';

export interface NodeOpControllerOptions {
  /** Overrides of the settings read from the environment (tests shorten timeouts). */
  settings?: Partial<NodeOpSettings>;
  /** The cluster-wide budgets' arbiter; default: the process's shared one (shared-arbiter.ts). */
  arbiter?: DisruptionArbiter;
  /** Concurrent reconciles (of different NodeOps); default NODEOP_WORKERS (nodeop-settings.ts). */
  workers?: number;
  clock?: Clock;
  syncTimeoutMs?: number;
}

const nodeOpOwners = ownerKeys(KINDS.nodeOp.kind, { apiGroup: API_GROUP });

/**
 * Which NodeOps a node change wakes. Cordon, bootID and readiness (reboots) matter to every NodeOp
 * on the node. Labels only select: they matter to the NodeOps that select by nodeSelector, and to
 * those with targetNodes only through the control-plane labels (control-plane nodes start first).
 * The Skyhook controller changes a node's status labels at every stage, which used to wake every
 * stage NodeOp that ever ran on the node.
 */
function nodeChangeWakes(node: V1Node, old: V1Node): 'all' | 'selecting' | 'none' {
  if (
    node.spec?.unschedulable !== old.spec?.unschedulable ||
    cordonedBy(node) !== cordonedBy(old) ||
    bootIdOf(node) !== bootIdOf(old) ||
    isNodeReady(node) !== isNodeReady(old)
  )
    return 'all';
  const labels = node.metadata?.labels ?? {};
  const oldLabels = old.metadata?.labels ?? {};
  if (JSON.stringify(labels) === JSON.stringify(oldLabels)) return 'none';
  const controlPlane = KUBERNETES_NAMES.controlPlaneLabels.some((l) => labels[l] !== oldLabels[l]);
  return controlPlane ? 'all' : 'selecting';
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
  const clock = options.clock ?? systemClock;
  const podsByJob = new PodsByJob(pods);
  addNodeOpIndexes({ jobs, pods, nodes });
  const reads = new NodeOpReads(nodeOps, (key) => fetchNodeOp(clients.custom, key));
  let controller: Controller | undefined;
  const reconciler = new NodeOpReconciler({
    clients,
    caches: { jobs, pods, nodes },
    podsOfJob: (namespace, jobName) => podsByJob.of(namespace, jobName),
    reads,
    events,
    logger: log,
    settings,
    clock,
    drains,
    stageMetrics: new StageMetrics(runtime.metrics.registry),
    enqueue: (key) => controller?.queue.add(key),
    arbiter,
    namespaces: namespaceGate(runtime.namespace, settings.extraNamespaces),
    ...(podNamespace && podName ? { ownPod: `${podNamespace}/${podName}` } : {}),
  });
  controller = new Controller({
    name: 'nodeop',
    reconcile: reconciler.reconcile,
    workers: options.workers ?? readNodeOpWorkers(process.env),
    // A finished NodeOp's reconcile drops the safety recheck an earlier one asked for.
    successCancelsRequeue: true,
    logger,
    metrics: runtime.metrics,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  // A held update that was not our write's echo wakes its NodeOp after all (nodeop-reads.ts).
  reads.missed = (key) => controller?.queue.add(key);
  watchEvents(controller, { nodeOps, jobs, pods, nodes }, reads, podsByJob);
  controller.start();

  return {
    stop: async (deadlineMs: number) => {
      const stopped = controller.stop(deadlineMs);
      drains.abort();
      return stopped;
    },
  };
}

/** The NodeOp from the API server (read-your-writes while the cache lags: nodeop-reads.ts). */
async function fetchNodeOp(custom: OperatorRuntime['clients']['custom'], key: string): Promise<NodeOp | undefined> {
  const { name, namespace } = parseKey(key);
  const resource = { group: API_GROUP, version: API_VERSION, plural: KINDS.nodeOp.plural };
  return ignoreNotFound(new CustomObjects<NodeOp>(custom, resource, namespace ?? '').get(name));
}

/**
 * Which events wake which NodeOp: its own changes (but not the echo of our own status write), its
 * Jobs' and pods' changes that the reconcile reads (event-filters.ts), and changes of the nodes it
 * targets or has started on that it acts on (nodeChangeWakes), found through NodeOpsByNode.
 */
function watchEvents(
  controller: Controller,
  caches: NodeOpCaches & { nodeOps: Informer<NodeOp> },
  reads: NodeOpReads,
  podsByJob: PodsByJob,
): void {
  const { nodeOps, jobs, pods, nodes } = caches;
  const podSucceeded = (job: V1Job): boolean =>
    podsByJob.of(job.metadata?.namespace ?? '', job.metadata?.name ?? '').some(isSucceededPod);
  const queue = controller.queue;
  const byNode = new NodeOpsByNode().follow(nodeOps);
  controller.watch(nodeOps, {
    add: ownKey,
    update: (op, old) => (op !== old && reads.isOwnStatusWrite(op, old) ? [] : ownKey(op)),
    delete: (op) => {
      reads.forget(objectKey(op));
      return ownKey(op);
    },
  });
  controller.watch(jobs, {
    add: (job) => (jobHasNews(job) ? nodeOpOwners(job) : []),
    update: (job, old) => {
      const owners = [...nodeOpOwners(job), ...nodeOpOwners(old)];
      if (job === old) return owners;
      const succeeded = podSucceeded(job);
      if (!jobChanged(job, old, succeeded)) return [];
      // A finish that only frees a slot wakes the NodeOps that may start another node.
      if (!isOnlyFinish(job, old, succeeded)) return owners;
      // The Job's own node has started, whether or not the cached status shows it yet (an entry
      // held back, or a status write still in flight, when the Job ends within seconds).
      const node = job.metadata?.labels?.[CHILD_LABELS.node];
      return owners.filter((key) => {
        const { name, namespace } = parseKey(key);
        const op = nodeOps.get(name, namespace);
        return mayStartNodes(op, node && op ? { ...op.status?.nodeStatuses, [node]: true } : undefined);
      });
    },
    delete: nodeOpOwners,
  });
  // A resync (update with old === object) always wakes, as before: it is the informer's safety net.
  // Reboot pods belong to the NodeOp; Job pods to a Job, whose owner is the NodeOp.
  const podOwners = (pod: V1Pod): string[] => {
    const direct = nodeOpOwners(pod);
    if (direct.length > 0) return direct;
    return (pod.metadata?.ownerReferences ?? [])
      .filter((ref) => ref.kind === 'Job')
      .flatMap((ref) => {
        const job = jobs.get(ref.name, pod.metadata?.namespace);
        return job ? nodeOpOwners(job) : [];
      });
  };
  controller.watch(pods, {
    add: (pod) => (podHasNews(pod) ? podOwners(pod) : []),
    update: (pod, old) => (pod === old || podChanged(pod, old) ? [...podOwners(pod), ...podOwners(old)] : []),
    delete: podOwners,
  });
  const enqueueAll = (keys: Iterable<string>): void => {
    for (const key of keys) queue.add(key);
  };
  nodes.on({
    add: (node) => enqueueAll(byNode.of(node)),
    update: (node, old) => {
      const wakes = node === old ? 'all' : nodeChangeWakes(node, old);
      if (wakes !== 'none') enqueueAll(byNode.of(node, wakes === 'selecting'));
    },
    delete: (node) => enqueueAll(byNode.of(node)),
  });
}

export function nodeOpControllerFactory(options: NodeOpControllerOptions = {}): ControllerFactory {
  return { name: 'nodeop', start: (runtime) => startNodeOpController(runtime, options) };
}
