/**
 * Node-initiated maintenance as the plugin shows it (pure): one row per node that has a maintenance
 * Lease (the daemon's request, the operator's grant, the daemon's heartbeat) or a maintenance cordon
 * claim, joined with what the MaintenancePolicies' status says of it (holder phase, queue reason).
 * `maintenance status` prints these rows; `maintenance release` and `skyhook plan` read the same
 * view, so all three agree on what "holding", "queued" and "stale" mean.
 */
import type { MaintenancePolicy } from '../../api/maintenance-policy.js';
import { isDoneFor, isGrantFor, type LeaseState } from '../../api/maintenance-protocol.js';
import { lockTtlMs } from '../../api/maintenance-settings.js';
import { NODE_ANNOTATION_PREFIXES } from '../../api/names.js';
import { nameOf } from '../../api/object-meta.js';

/**
 * A daemon whose Lease has not been renewed for this long is taken as gone when its policy sets no
 * lockTTL (the daemon renews every few seconds; five minutes is far beyond a restart or a reboot of
 * a healthy node).
 */
export const DEFAULT_STALE_AFTER_MS = 5 * 60_000;

export type MaintenanceState = 'holding' | 'queued' | 'requested' | 'finishing' | 'orphaned' | 'idle';

export interface MaintenanceRow {
  node: string;
  /** The policy that granted the slot, else the one queuing the node, else the claim's. */
  policy?: string;
  state: MaintenanceState;
  protocol?: string;
  /** A holder's phase (policy status) or the grant's phase (Lease). */
  phase?: string;
  /** The grant's phase in the Lease (`granted`: cordon and drain under way; `drained`: the daemon acts), fresher than the status. */
  grantPhase?: string;
  /** Why a queued node waits (MaxConcurrent, ClusterBudget, RebootBlocked, ...). */
  reason?: string;
  requestedAt?: string;
  grantedAt?: string;
  /** Seconds since the daemon last renewed its Lease. */
  heartbeatAgeSeconds?: number;
  /** The daemon stopped reporting (older than the policy's lockTTL, or DEFAULT_STALE_AFTER_MS). */
  stale: boolean;
  /** `maintenance_<policy>` claims on the node. */
  claims: string[];
  cordoned: boolean;
  /** False when the Node object is gone (its Lease or status entry is left over). */
  nodeExists: boolean;
  message?: string;
}

/** The node facts the view needs (a V1Node fits through nodeFacts). */
export interface NodeFacts {
  name: string;
  exists: boolean;
  unschedulable: boolean;
  annotations: Record<string, string>;
}

export const maintenanceClaimsOf = (annotations: Record<string, string>): string[] =>
  Object.keys(annotations)
    .filter((key) => key.startsWith(NODE_ANNOTATION_PREFIXES.maintenance))
    .sort();

const policyOfClaim = (claim: string): string => claim.slice(NODE_ANNOTATION_PREFIXES.maintenance.length);

function staleAfterMs(policy: MaintenancePolicy | undefined): number {
  return (policy && lockTtlMs(policy.spec)) ?? DEFAULT_STALE_AFTER_MS;
}

function stateOf(lease: LeaseState | undefined, claims: string[], queued: boolean): MaintenanceState {
  if (lease && isGrantFor(lease)) return isDoneFor(lease) ? 'finishing' : 'holding';
  // A grant for an older request, or a maintenance cordon with no grant behind it: left behind.
  if (lease?.grant || claims.length > 0) return 'orphaned';
  if (lease?.request) return queued ? 'queued' : 'requested';
  return 'idle';
}

/** One node's row (pure). `now` in ms. */
export function maintenanceRow(
  node: NodeFacts,
  lease: LeaseState | undefined,
  policies: readonly MaintenancePolicy[],
  now: number,
): MaintenanceRow {
  const holderOf = policies.flatMap((p) =>
    (p.status?.holders ?? []).filter((h) => h.node === node.name).map((h) => ({ p, h })),
  )[0];
  const queuedIn = policies.flatMap((p) =>
    (p.status?.queue ?? []).filter((q) => q.node === node.name).map((q) => ({ p, q })),
  )[0];
  const claims = maintenanceClaimsOf(node.annotations);
  const policyName =
    lease?.grant?.policy ??
    (holderOf && nameOf(holderOf.p)) ??
    (queuedIn && nameOf(queuedIn.p)) ??
    claims.map(policyOfClaim)[0];
  const policy = policies.find((p) => nameOf(p) === policyName);
  const age = lease?.renewedAtMs === undefined ? undefined : Math.max(0, Math.round((now - lease.renewedAtMs) / 1000));
  const row: MaintenanceRow = {
    node: node.name,
    state: stateOf(lease, claims, queuedIn !== undefined),
    stale: age === undefined ? lease !== undefined : age * 1000 > staleAfterMs(policy),
    claims,
    cordoned: node.unschedulable,
    nodeExists: node.exists,
  };
  if (policyName) row.policy = policyName;
  const protocol = lease?.request?.protocol ?? holderOf?.h.protocol ?? queuedIn?.q.protocol;
  if (protocol) row.protocol = protocol;
  const phase = holderOf?.h.phase ?? lease?.grant?.phase;
  if (phase) row.phase = phase;
  if (lease?.grant?.phase) row.grantPhase = lease.grant.phase;
  if (queuedIn && row.state !== 'holding') row.reason = queuedIn.q.reason;
  const requestedAt = lease?.request?.requestedAt ?? holderOf?.h.requestedAt ?? queuedIn?.q.requestedAt;
  if (requestedAt) row.requestedAt = requestedAt;
  const grantedAt = lease?.grant?.grantedAt ?? holderOf?.h.grantedAt;
  if (grantedAt) row.grantedAt = grantedAt;
  if (age !== undefined) row.heartbeatAgeSeconds = age;
  const message = holderOf?.h.message ?? queuedIn?.q.message ?? lease?.progress;
  if (message) row.message = message;
  return row;
}

/**
 * Rows for every node with a Lease or a maintenance claim, by node name (pure). A Lease whose node
 * is gone shows as such (exists false → its row is `orphaned` when it holds anything).
 */
export function maintenanceRows(
  nodes: readonly NodeFacts[],
  leases: readonly LeaseState[],
  policies: readonly MaintenancePolicy[],
  now: number,
): MaintenanceRow[] {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const leaseOf = new Map(leases.map((l) => [l.node, l]));
  const names = new Set([
    ...leases.map((l) => l.node),
    ...nodes.filter((n) => maintenanceClaimsOf(n.annotations).length > 0).map((n) => n.name),
  ]);
  return [...names].sort().map((name) => {
    const node = byName.get(name) ?? { name, exists: false, unschedulable: false, annotations: {} };
    return maintenanceRow(node, leaseOf.get(name), policies, now);
  });
}
