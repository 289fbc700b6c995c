/**
 * The reads behind every view of node-initiated maintenance (`maintenance status|release`, `skyhook
 * plan`): the MaintenancePolicies (none when the CRD is not installed), the daemons' Leases in the
 * operator's namespace, and the nodes the caller already listed, joined into rows (maintenance-view.ts).
 */
import type { V1Lease, V1Node } from '@kubernetes/client-node';
import type { MaintenancePolicy } from '../../api/maintenance-policy.js';
import { leaseStateOf, MAINTENANCE_LEASE, type LeaseState } from '../../api/maintenance-protocol.js';
import { API_GROUP, API_VERSION, KINDS } from '../../api/names.js';
import { nameOf } from '../../api/object-meta.js';
import { retryWhileBusy } from '../../kube/busy-retry.js';
import type { KubeClients } from '../../kube/client.js';
import { CustomObjects } from '../../kube/custom-objects.js';
import { ignoreNotFound } from '../../kube/writes.js';
import { maintenanceRows, type MaintenanceRow, type NodeFacts } from './maintenance-view.js';

export const nodeFacts = (node: V1Node): NodeFacts => ({
  name: nameOf(node),
  exists: true,
  unschedulable: node.spec?.unschedulable === true,
  annotations: node.metadata?.annotations ?? {},
});

export async function listMaintenancePolicies(clients: KubeClients): Promise<MaintenancePolicy[]> {
  const policies = new CustomObjects<MaintenancePolicy>(clients.custom, {
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.maintenancePolicy.plural,
  });
  return (await ignoreNotFound(retryWhileBusy(() => policies.list()))) ?? [];
}

export async function listMaintenanceLeases(
  clients: KubeClients,
  namespace: string,
): Promise<{ lease: V1Lease; state: LeaseState }[]> {
  const list = await retryWhileBusy(() =>
    clients.coordination.listNamespacedLease({ namespace, labelSelector: MAINTENANCE_LEASE.nodeLabel }),
  );
  return list.items.flatMap((lease) => {
    const state = leaseStateOf(lease);
    return state ? [{ lease, state }] : [];
  });
}

export interface MaintenanceSnapshot {
  rows: MaintenanceRow[];
  /** Each node's Lease, by node name. */
  leases: Map<string, V1Lease>;
}

export async function readMaintenance(
  clients: KubeClients,
  namespace: string,
  nodes: readonly V1Node[],
): Promise<MaintenanceSnapshot> {
  const [policies, leases] = await Promise.all([
    listMaintenancePolicies(clients),
    listMaintenanceLeases(clients, namespace),
  ]);
  return {
    rows: maintenanceRows(
      nodes.map(nodeFacts),
      leases.map((l) => l.state),
      policies,
      Date.now(),
    ),
    leases: new Map(leases.map((l) => [l.state.node, l.lease])),
  };
}
