/**
 * What the maintenance controller's steps share: clients, caches, the Lease writer, events, the
 * disruption arbiter, the reboot blockers, background drains, metrics, and settings; plus the one
 * view of a policy a reconcile works on.
 */
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { MaintenancePolicy } from '../../api/maintenance-policy.js';
import { API_GROUP, API_VERSION, KINDS } from '../../api/names.js';
import { CustomObjects } from '../../kube/custom-objects.js';
import type { KubeClients } from '../../kube/client.js';
import type { Clock } from '../../kube/clock.js';
import type { EventRecorder, EventType } from '../../kube/events.js';
import type { Informer } from '../../kube/informer.js';
import type { DisruptionArbiter } from '../disruption/arbiter.js';
import type { DrainTasks } from '../nodeop/drain-tasks.js';
import type { RebootBlockerCheck } from './blockers.js';
import type { LeaseWrites } from './lease-writes.js';
import type { MaintenanceMetrics } from './maintenance-metrics.js';

export interface MaintenanceSettings {
  /** How long a request whose drain failed waits before it may be granted again. */
  drainFailureBackoffMs: number;
  /** How soon a request held by a blocker (pods, alerts) is looked at again. */
  blockerRecheckMs: number;
  /** The longest a policy goes without a reconcile (TTLs and heartbeats are time-based). */
  resyncMs: number;
  /** Completions kept in the status. */
  recentCompletions: number;
}

export const DEFAULT_MAINTENANCE_SETTINGS: MaintenanceSettings = {
  drainFailureBackoffMs: 60_000,
  blockerRecheckMs: 30_000,
  resyncMs: 30_000,
  recentCompletions: 50,
};

export interface MaintenanceCaches {
  policies: Informer<MaintenancePolicy>;
  nodes: Informer<V1Node>;
  leases: Informer<V1Lease>;
}

export interface MaintenanceContext {
  clients: KubeClients;
  caches: MaintenanceCaches;
  leases: LeaseWrites;
  events: EventRecorder;
  logger: Logger;
  clock: Clock;
  arbiter: DisruptionArbiter;
  rebootBlockers: RebootBlockerCheck;
  drains: DrainTasks;
  metrics: MaintenanceMetrics;
  settings: MaintenanceSettings;
  /** Wakes a policy key (a drain finished or reported progress). */
  enqueue(policy: string): void;
  /** The operator's own pod (`namespace/name`), never evicted; undefined outside a pod. */
  ownPod?: string;
  /** Stopped with the controller (blocker checks in flight). */
  signal: AbortSignal;
}

/** The MaintenancePolicy client (status writes). */
export const policyObjects = (ctx: MaintenanceContext): CustomObjects<MaintenancePolicy> =>
  new CustomObjects<MaintenancePolicy>(ctx.clients.custom, {
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.maintenancePolicy.plural,
  });

/** The arbiter's holder name of a policy. */
export const holderName = (policy: string): string => `maintenance/${policy}`;

/** Records an event on the policy and, when it still exists, on the node it is about. */
export function notify(
  ctx: MaintenanceContext,
  policy: MaintenancePolicy,
  node: string,
  type: EventType,
  reason: string,
  message: string,
): void {
  ctx.events.record(policy, type, reason, `node ${node}: ${message}`);
  const nodeObject = ctx.caches.nodes.get(node);
  if (nodeObject)
    ctx.events.record(
      { ...nodeObject, apiVersion: 'v1', kind: 'Node' },
      type,
      reason,
      `MaintenancePolicy ${policy.metadata.name ?? ''}: ${message}`,
    );
}
