/**
 * The slot decisions of one MaintenancePolicy, pure: from the cached nodes and maintenance Leases,
 * which holders keep their slot (and what each waits for), which slots are released and why, and the
 * queue in arrival order with the reason each request cannot be granted yet. The reconciler performs
 * the writes and asks the blockers and the disruption arbiter for the queue's head, in order, while
 * slots are free; keeping the rest pure lets unit tests cover arrival order, maxConcurrent, the TTL
 * and node deletion without a cluster.
 */
import type { MaintenanceProtocol } from '../../api/maintenance-policy.js';
import { isDoneFor, isGrantFor, type LeaseState } from '../../api/maintenance-protocol.js';
import type { NodeCordonView } from '../../jobs/cordon/claims.js';
import { compareText } from '../../util/compare.js';

export interface SlotPolicy {
  name: string;
  maxConcurrent: number;
  /** Protocols the policy serves. */
  protocols: ReadonlySet<MaintenanceProtocol>;
  /** lockTTL in ms; undefined = never expires. */
  ttlMs?: number;
  /** Whether a reboot may start now, and when it next may (ms), from rebootWindows. */
  rebootWindow: { open: boolean; nextOpenMs?: number };
}

export interface SlotInput {
  policy: SlotPolicy;
  /** Every node in the cache, by name. */
  nodes: ReadonlyMap<string, NodeCordonView>;
  /** Nodes this policy serves (policyForNode). */
  served: ReadonlySet<string>;
  /** Every maintenance Lease, parsed. */
  leases: readonly LeaseState[];
  /** The cordon claim key of the policy (`maintenance_<policy>`). */
  claim: string;
  /** Requests held back after a failed drain, until this time (ms), with the failure. */
  backoff: ReadonlyMap<string, { untilMs: number; message: string }>;
  now: number;
}

export type ReleaseReason = 'Completed' | 'NodeDeleted' | 'Expired' | 'Withdrawn' | 'Orphaned';

export interface Release {
  node: string;
  reason: ReleaseReason;
  message: string;
  /** The node still exists (so its cordon claim is lifted). */
  nodeExists: boolean;
  /** The released holder's lease state (absent for an orphaned claim). */
  lease?: LeaseState;
}

export interface Holder {
  node: string;
  lease: LeaseState & Required<Pick<LeaseState, 'request' | 'grant'>>;
}

export interface QueueEntry {
  node: string;
  protocol: MaintenanceProtocol;
  requestedAt: string;
  /** Why the request cannot be granted whatever the free slots; absent: eligible, in order. */
  held?: { reason: string; message: string };
}

export interface SlotPlan {
  holders: Holder[];
  releases: Release[];
  /** Arrival order (requestedAt, then node name). */
  queue: QueueEntry[];
  freeSlots: number;
  /** When something changes by time alone (a TTL expiry, a window opening, a backoff ending). */
  nextChangeMs?: number;
}

const ms = (time: string): number => Date.parse(time);

/** When a holder's TTL runs out: the later of its grant and its daemon's last heartbeat, plus the TTL. */
export function expiresAtMs(lease: Holder['lease'], ttlMs: number): number {
  return Math.max(ms(lease.grant.grantedAt), lease.renewedAtMs ?? 0) + ttlMs;
}

function releaseOf(input: SlotInput, lease: LeaseState): Release | undefined {
  const { policy, nodes, now } = input;
  const nodeExists = nodes.has(lease.node);
  const base = { node: lease.node, nodeExists, lease };
  if (!nodeExists) return { ...base, reason: 'NodeDeleted', message: `node ${lease.node} was deleted` };
  if (!isGrantFor(lease))
    return { ...base, reason: 'Withdrawn', message: `node ${lease.node} no longer asks for the slot it was granted` };
  if (isDoneFor(lease)) return { ...base, reason: 'Completed', message: `maintenance of node ${lease.node} finished` };
  if (policy.ttlMs !== undefined && now >= expiresAtMs(lease as Holder['lease'], policy.ttlMs))
    return {
      ...base,
      reason: 'Expired',
      message: `the daemon of node ${lease.node} has not reported for longer than lockTTL (${policy.ttlMs / 1000}s)`,
    };
  return undefined;
}

function heldReason(input: SlotInput, lease: LeaseState, protocol: MaintenanceProtocol): QueueEntry['held'] {
  const { policy, now } = input;
  if (!policy.protocols.has(protocol))
    return { reason: 'ProtocolDisabled', message: `policy ${policy.name} does not serve the ${protocol} protocol` };
  const backoff = input.backoff.get(lease.node);
  if (backoff && now < backoff.untilMs)
    return {
      reason: 'DrainFailed',
      message: `${backoff.message}; retry at ${new Date(backoff.untilMs).toISOString()}`,
    };
  if (protocol === 'reboot' && !policy.rebootWindow.open) {
    const next = policy.rebootWindow.nextOpenMs;
    return {
      reason: 'OutsideMaintenanceWindow',
      message: `outside rebootWindows${next !== undefined ? `; next opens at ${new Date(next).toISOString()}` : ''}`,
    };
  }
  return undefined;
}

function byArrival(a: QueueEntry, b: QueueEntry): number {
  return ms(a.requestedAt) - ms(b.requestedAt) || compareText(a.node, b.node);
}

export function planSlots(input: SlotInput): SlotPlan {
  const { policy, nodes, now } = input;
  const holders: Holder[] = [];
  const releases: Release[] = [];
  const queue: QueueEntry[] = [];
  const times: number[] = [];
  const granted = new Set<string>();
  for (const lease of input.leases) {
    if (lease.grant?.policy === policy.name) {
      granted.add(lease.node);
      const release = releaseOf(input, lease);
      if (release) releases.push(release);
      else {
        const holder = { node: lease.node, lease: lease as Holder['lease'] };
        holders.push(holder);
        if (policy.ttlMs !== undefined) times.push(expiresAtMs(holder.lease, policy.ttlMs));
      }
      continue;
    }
    if (!lease.request || lease.grant || isDoneFor(lease) || !input.served.has(lease.node) || !nodes.has(lease.node))
      continue;
    const { protocol, requestedAt } = lease.request;
    const held = heldReason(input, lease, protocol);
    queue.push({ node: lease.node, protocol, requestedAt, ...(held ? { held } : {}) });
  }
  // A node cordoned under this policy's claim that no grant explains (a release cut short): lift it.
  for (const [node, view] of nodes)
    if (!granted.has(node) && Object.hasOwn(view.annotations, input.claim))
      releases.push({ node, reason: 'Orphaned', message: `node ${node} holds no slot`, nodeExists: true });
  for (const backoff of input.backoff.values()) if (backoff.untilMs > now) times.push(backoff.untilMs);
  const next = policy.rebootWindow.nextOpenMs;
  if (!policy.rebootWindow.open && next !== undefined && queue.some((q) => q.protocol === 'reboot')) times.push(next);
  queue.sort(byArrival);
  holders.sort(
    (a, b) => ms(a.lease.request.requestedAt) - ms(b.lease.request.requestedAt) || compareText(a.node, b.node),
  );
  const nextChangeMs = times.length > 0 ? Math.min(...times) : undefined;
  return {
    holders,
    releases,
    queue,
    freeSlots: Math.max(0, policy.maxConcurrent - holders.length),
    ...(nextChangeMs !== undefined ? { nextChangeMs } : {}),
  };
}
