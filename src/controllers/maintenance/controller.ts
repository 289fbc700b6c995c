/**
 * The maintenance controller's wiring: informers over MaintenancePolicies, nodes (the cache shared
 * with the other controllers) and the per-node maintenance Leases in the operator's namespace; every
 * event enqueues the policies (few, cheap to reconcile, and a node's or Lease's change can move a slot
 * between them); the reconciler; the factory the operator's registry starts. The disruption arbiter
 * and the reboot blockers are dependencies, so the cluster budget and the real blockers plug in.
 */
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import type { MaintenancePolicy } from '../../api/maintenance-policy.js';
import { MAINTENANCE_LEASE } from '../../api/maintenance-protocol.js';
import { API_GROUP, API_VERSION, KINDS, NODE_ANNOTATION_PREFIXES } from '../../api/names.js';
import { nameOf } from '../../api/object-meta.js';
import { systemClock, type Clock } from '../../kube/clock.js';
import { Controller } from '../../kube/controller.js';
import { customResourcePath } from '../../kube/list-watch.js';
import type { ControllerFactory, OperatorRuntime, Stoppable } from '../../kube/runtime.js';
import { cachedNode } from '../cached-objects.js';
import type { DisruptionArbiter } from '../disruption/arbiter.js';
import { sharedDisruption } from '../disruption/shared-arbiter.js';
import { DrainTasks } from '../nodeop/drain-tasks.js';
import { checkRebootBlockers, type RebootBlockerCheck } from './blockers.js';
import { DEFAULT_MAINTENANCE_SETTINGS, type MaintenanceSettings } from './context.js';
import { LeaseWrites } from './lease-writes.js';
import { MaintenanceMetrics } from './maintenance-metrics.js';
import { MaintenanceReconciler } from './reconciler.js';

export interface MaintenanceControllerOptions {
  /** The cluster-wide disruption budgets' arbiter; default: the process's shared one (shared-arbiter.ts). */
  arbiter?: DisruptionArbiter;
  rebootBlockers?: RebootBlockerCheck;
  settings?: Partial<MaintenanceSettings>;
  /** Where the node daemons keep their Leases; default the operator's namespace. */
  leaseNamespace?: string;
  clock?: Clock;
  syncTimeoutMs?: number;
}

/** Node changes the slots read: labels (which policy serves it), the cordon and its claims. */
function nodeChangeMatters(node: V1Node, old: V1Node): boolean {
  const claims = (n: V1Node) =>
    Object.keys(n.metadata?.annotations ?? {})
      .filter((key) => key.startsWith(NODE_ANNOTATION_PREFIXES.maintenance))
      .sort()
      .join(',');
  return (
    JSON.stringify(node.metadata?.labels) !== JSON.stringify(old.metadata?.labels) ||
    node.spec?.unschedulable !== old.spec?.unschedulable ||
    claims(node) !== claims(old)
  );
}

/** A Lease change other than a heartbeat (renewTime moves every few seconds; the resync reads it). */
function leaseChangeMatters(lease: V1Lease, old: V1Lease): boolean {
  return JSON.stringify(lease.metadata?.annotations) !== JSON.stringify(old.metadata?.annotations);
}

export async function startMaintenanceController(
  runtime: OperatorRuntime,
  options: MaintenanceControllerOptions = {},
): Promise<Stoppable> {
  const { informers, clients, events, logger } = runtime;
  const leaseNamespace = options.leaseNamespace ?? runtime.namespace;
  const policies = informers.informer<MaintenancePolicy>(
    customResourcePath(API_GROUP, API_VERSION, KINDS.maintenancePolicy.plural),
  );
  const nodes = informers.informer<V1Node>('/api/v1/nodes', { transform: cachedNode });
  const leases = informers.informer<V1Lease>(`/apis/coordination.k8s.io/v1/namespaces/${leaseNamespace}/leases`, {
    labelSelector: MAINTENANCE_LEASE.nodeLabel,
  });
  const syncTimeoutMs = options.syncTimeoutMs ?? 120_000;
  await Promise.all([policies, nodes, leases].map((i) => i.waitForSync(syncTimeoutMs)));
  const disruption = options.arbiter ? undefined : await sharedDisruption(runtime, syncTimeoutMs);
  const arbiter = options.arbiter ?? disruption!.arbiter;

  const clock = options.clock ?? systemClock;
  const drains = new DrainTasks();
  const abort = new AbortController();
  const podNamespace = process.env['POD_NAMESPACE'];
  const podName = process.env['POD_NAME'];
  let controller: Controller | undefined;
  const reconciler = new MaintenanceReconciler({
    clients,
    caches: { policies, nodes, leases },
    leases: new LeaseWrites(clients.coordination, leaseNamespace, leases),
    events,
    logger: logger.child({ controller: 'maintenance' }),
    clock,
    arbiter,
    rebootBlockers: options.rebootBlockers ?? checkRebootBlockers,
    drains,
    metrics: new MaintenanceMetrics(runtime.metrics.registry),
    settings: { ...DEFAULT_MAINTENANCE_SETTINGS, ...options.settings },
    enqueue: (key) => controller?.queue.add(key),
    signal: abort.signal,
    ...(podNamespace && podName ? { ownPod: `${podNamespace}/${podName}` } : {}),
  });
  // One worker: a policy's slots are counted and granted in one pass at a time.
  controller = new Controller({
    name: 'maintenance',
    reconcile: reconciler.reconcile,
    workers: 1,
    logger,
    metrics: runtime.metrics,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const queue = controller.queue;
  const enqueueAll = (): void => {
    for (const policy of policies.list()) queue.add(nameOf(policy));
  };
  controller.watch(policies);
  nodes.on({
    add: enqueueAll,
    update: (node, old) => {
      if (node === old || nodeChangeMatters(node, old)) enqueueAll();
    },
    delete: enqueueAll,
  });
  // A budget's change (its count, its windows) may free a request that waits for it.
  disruption?.budgets?.on({ add: enqueueAll, update: enqueueAll, delete: enqueueAll });
  leases.on({
    add: enqueueAll,
    update: (lease, old) => {
      if (lease === old || leaseChangeMatters(lease, old)) enqueueAll();
    },
    delete: enqueueAll,
  });
  controller.start();

  return {
    stop: async (deadlineMs: number) => {
      const stopped = controller.stop(deadlineMs);
      abort.abort();
      drains.abort();
      return stopped;
    },
  };
}

export function maintenanceControllerFactory(options: MaintenanceControllerOptions = {}): ControllerFactory {
  return { name: 'maintenance', start: (runtime) => startMaintenanceController(runtime, options) };
}
