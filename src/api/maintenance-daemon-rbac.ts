/**
 * The maintenance daemon's permissions (`skyhook maintenance`, config/maintenance/), written down
 * once: config/maintenance/rbac.yaml must grant exactly these (a unit test compares). Less than the
 * operator's on purpose: a privileged pod on every node holds this token, so it can read its node and
 * the policies and write maintenance Leases, nothing else. It never cordons, drains or evicts.
 */
import type { Permission } from './operator-rbac.js';

export const MAINTENANCE_DAEMON_SERVICE_ACCOUNT = 'skyhook-maintenance';

const READ = ['get', 'list', 'watch'] as const;

/** Cluster-wide (ClusterRole): its node (labels, boot ID) and the MaintenancePolicies. */
export const MAINTENANCE_DAEMON_CLUSTER_PERMISSIONS: readonly Permission[] = [
  { apiGroup: '', resource: 'nodes', verbs: READ },
  { apiGroup: 'skyhook.nvidia.com', resource: 'maintenancepolicies', verbs: READ },
];

/** In the operator's namespace (Role): the node's maintenance Lease (heartbeat, request, done). */
export const MAINTENANCE_DAEMON_NAMESPACE_PERMISSIONS: readonly Permission[] = [
  { apiGroup: 'coordination.k8s.io', resource: 'leases', verbs: [...READ, 'create', 'update', 'patch'] },
];
