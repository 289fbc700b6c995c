/**
 * The operator's permissions, written down once: config/rbac/ must grant exactly these (a unit test
 * compares), and the e2e test pins what the API server reports for the ServiceAccount. Every entry
 * is something the operator does; there are no wildcards.
 */

export interface Permission {
  /** API group; '' is the core group. */
  readonly apiGroup: string;
  /** Resource or `resource/subresource`. */
  readonly resource: string;
  readonly verbs: readonly string[];
}

export const OPERATOR_NAMESPACE = 'skyhook';
export const OPERATOR_SERVICE_ACCOUNT = 'skyhook-operator';

const READ = ['get', 'list', 'watch'] as const;

/** Cluster-wide (ClusterRole): NodeOps may live in any namespace, so their Jobs and pods too. */
export const OPERATOR_CLUSTER_PERMISSIONS: readonly Permission[] = [
  // Skyhooks: read; patch for the finalizer; status written by the controller.
  { apiGroup: 'skyhook.nvidia.com', resource: 'skyhooks', verbs: [...READ, 'patch', 'update'] },
  { apiGroup: 'skyhook.nvidia.com', resource: 'skyhooks/status', verbs: ['get', 'patch', 'update'] },
  // Owner references with blockOwnerDeletion on the SCR's children need this.
  { apiGroup: 'skyhook.nvidia.com', resource: 'skyhooks/finalizers', verbs: ['update'] },
  { apiGroup: 'skyhook.nvidia.com', resource: 'deploymentpolicies', verbs: READ },
  { apiGroup: 'skyhook.nvidia.com', resource: 'deploymentpolicies/status', verbs: ['get', 'patch', 'update'] },
  // DisruptionBudgets: read by every actor before it disrupts a node; status written by the operator.
  { apiGroup: 'skyhook.nvidia.com', resource: 'disruptionbudgets', verbs: READ },
  { apiGroup: 'skyhook.nvidia.com', resource: 'disruptionbudgets/status', verbs: ['get', 'patch', 'update'] },
  // NodeOps: the Skyhook controller creates and deletes its children; the NodeOp controller runs them.
  { apiGroup: 'skyhook.nvidia.com', resource: 'nodeops', verbs: [...READ, 'create', 'delete', 'patch', 'update'] },
  { apiGroup: 'skyhook.nvidia.com', resource: 'nodeops/status', verbs: ['get', 'patch', 'update'] },
  { apiGroup: 'skyhook.nvidia.com', resource: 'nodeops/finalizers', verbs: ['update'] },
  // Nodes: annotations, labels, cordon, taints; conditions go through nodes/status.
  { apiGroup: '', resource: 'nodes', verbs: [...READ, 'patch', 'update'] },
  { apiGroup: '', resource: 'nodes/status', verbs: ['patch'] },
  // Pods: drain lists them and evicts; reboot pods are created and deleted; logs of failed stages.
  { apiGroup: '', resource: 'pods', verbs: [...READ, 'create', 'delete'] },
  { apiGroup: '', resource: 'pods/eviction', verbs: ['create'] },
  { apiGroup: '', resource: 'pods/log', verbs: ['get'] },
  { apiGroup: 'batch', resource: 'jobs', verbs: [...READ, 'create', 'delete', 'patch'] },
  // The Jobs the NodeOp controller runs itself (spec.managedBy): it writes their status, and their
  // pods' owner references block the Job's deletion (jobs/finalizers, where that is enforced).
  { apiGroup: 'batch', resource: 'jobs/status', verbs: ['get', 'patch'] },
  { apiGroup: 'batch', resource: 'jobs/finalizers', verbs: ['update'] },
  // Package configMaps and per-node metadata ConfigMaps.
  { apiGroup: '', resource: 'configmaps', verbs: [...READ, 'create', 'delete', 'patch', 'update'] },
  { apiGroup: '', resource: 'events', verbs: ['create', 'patch'] },
  // MaintenancePolicies: read; status written by the maintenance controller.
  { apiGroup: 'skyhook.nvidia.com', resource: 'maintenancepolicies', verbs: READ },
  { apiGroup: 'skyhook.nvidia.com', resource: 'maintenancepolicies/status', verbs: ['get', 'patch', 'update'] },
  // PackageTrustPolicies: read before a package's stages run; status (Ready) written by the operator.
  { apiGroup: 'skyhook.nvidia.com', resource: 'packagetrustpolicies', verbs: READ },
  { apiGroup: 'skyhook.nvidia.com', resource: 'packagetrustpolicies/status', verbs: ['get', 'patch', 'update'] },
  // Drain reports which PodDisruptionBudget blocks an eviction.
  { apiGroup: 'policy', resource: 'poddisruptionbudgets', verbs: READ },
];

/**
 * In the operator's namespace only (Role): the leader-election Lease, and the per-node maintenance
 * Leases (watched; the grant is patched in; a deleted node's is deleted).
 */
export const OPERATOR_NAMESPACE_PERMISSIONS: readonly Permission[] = [
  { apiGroup: 'coordination.k8s.io', resource: 'leases', verbs: [...READ, 'create', 'update', 'patch', 'delete'] },
  // The pull secrets (IMAGE_PULL_SECRET, packages' imagePullSecrets) the signature verifier logs in with.
  { apiGroup: '', resource: 'secrets', verbs: ['get'] },
];
