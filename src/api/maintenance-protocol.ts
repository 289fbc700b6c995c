/**
 * What the node daemon (`skyhook maintenance`) and the operator's maintenance controller say to each
 * other, written down once. Each node has one coordination.k8s.io Lease in the operator's namespace:
 * the daemon renews it (the heartbeat a slot's TTL reads, without churning the Node object every
 * controller watches) and writes its request and its "done" there; the operator writes the grant
 * there. Each annotation has exactly one writer, so neither side ever overwrites the other's state,
 * and everything either side needs after a restart is in the cluster (plus the daemon's host files).
 *
 *   daemon    request   {protocol, requestedAt, bootId}   "this node asks for a slot"
 *   daemon    progress  free text                         what the daemon waits for (status message)
 *   daemon    done      {requestedAt, completedAt}        "the request of requestedAt is finished"
 *   operator  grant     {policy, requestedAt, grantedAt, phase}
 *             phase `granted`: slot given, cordon and drain under way; `drained`: the daemon may act.
 *
 * A request ends when the operator, seeing `done`, uncordons and removes `grant`; the daemon, seeing
 * `done` without `grant`, removes `request` and `done` in one patch. A grant that disappears before
 * `done` (TTL, a person's release) sends the daemon back to waiting in the queue.
 */
import { type MaintenanceProtocol, MAINTENANCE_PROTOCOLS } from './maintenance-policy.js';
import { PREFIX } from './names.js';

export const MAINTENANCE_LEASE = {
  /** Label on every maintenance Lease: the node's name (the operator's informer selects by it). */
  nodeLabel: `${PREFIX}/maintenance-node`,
  request: `${PREFIX}/maintenance-request`,
  progress: `${PREFIX}/maintenance-progress`,
  done: `${PREFIX}/maintenance-done`,
  grant: `${PREFIX}/maintenance-grant`,
} as const;

export const GRANT_PHASES = ['granted', 'drained'] as const;
export type GrantPhase = (typeof GRANT_PHASES)[number];

export interface MaintenanceRequest {
  protocol: MaintenanceProtocol;
  /** RFC 3339; the queue's order (arrival order) and the identity of the request. */
  requestedAt: string;
  /** The node's boot ID when it asked (a reboot request's "before"). */
  bootId?: string;
}

export interface MaintenanceDone {
  requestedAt: string;
  completedAt: string;
}

export interface MaintenanceGrant {
  policy: string;
  /** The request this grant answers; a grant for an older request is stale. */
  requestedAt: string;
  grantedAt: string;
  /** `granted`: cordon and drain under way (drainOptions.timeoutSeconds counts from grantedAt); `drained`: the daemon may act. */
  phase: GrantPhase;
}

const LEASE_NAME_PREFIX = 'maintenance-';
const MAX_NAME = 253;

/** 32-bit FNV-1a in hex: a short stable suffix for names too long to keep whole. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** The name of a node's maintenance Lease (node names may be 253 long: long ones are shortened with a hash). */
export function maintenanceLeaseName(node: string): string {
  const name = `${LEASE_NAME_PREFIX}${node}`;
  if (name.length <= MAX_NAME) return name;
  return `${name.slice(0, MAX_NAME - 9)}-${fnv1a(node)}`;
}

function parseObject(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const isTime = (value: unknown): value is string => typeof value === 'string' && !Number.isNaN(Date.parse(value));

export function parseRequest(text: string | undefined): MaintenanceRequest | undefined {
  const o = parseObject(text);
  if (!o || !isTime(o['requestedAt'])) return undefined;
  const protocol = o['protocol'];
  if (!MAINTENANCE_PROTOCOLS.includes(protocol as MaintenanceProtocol)) return undefined;
  const bootId = o['bootId'];
  return {
    protocol: protocol as MaintenanceProtocol,
    requestedAt: o['requestedAt'],
    ...(typeof bootId === 'string' ? { bootId } : {}),
  };
}

export function parseDone(text: string | undefined): MaintenanceDone | undefined {
  const o = parseObject(text);
  if (!o || !isTime(o['requestedAt']) || !isTime(o['completedAt'])) return undefined;
  return { requestedAt: o['requestedAt'], completedAt: o['completedAt'] };
}

export function parseGrant(text: string | undefined): MaintenanceGrant | undefined {
  const o = parseObject(text);
  if (!o || typeof o['policy'] !== 'string' || !isTime(o['requestedAt']) || !isTime(o['grantedAt'])) return undefined;
  const phase = o['phase'];
  if (!GRANT_PHASES.includes(phase as GrantPhase)) return undefined;
  return { policy: o['policy'], requestedAt: o['requestedAt'], grantedAt: o['grantedAt'], phase: phase as GrantPhase };
}

/** The protocol state of one node's Lease, parsed (malformed values read as absent). */
export interface LeaseState {
  node: string;
  request?: MaintenanceRequest;
  done?: MaintenanceDone;
  grant?: MaintenanceGrant;
  progress?: string;
  /** Last heartbeat (ms since the epoch), from spec.renewTime. */
  renewedAtMs?: number;
}

export interface LeaseLike {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { renewTime?: Date | string };
}

export function leaseStateOf(lease: LeaseLike): LeaseState | undefined {
  const node = lease.metadata?.labels?.[MAINTENANCE_LEASE.nodeLabel];
  if (!node) return undefined;
  const a = lease.metadata?.annotations ?? {};
  const request = parseRequest(a[MAINTENANCE_LEASE.request]);
  const done = parseDone(a[MAINTENANCE_LEASE.done]);
  const grant = parseGrant(a[MAINTENANCE_LEASE.grant]);
  const progress = a[MAINTENANCE_LEASE.progress];
  const renew = lease.spec?.renewTime;
  const renewedAtMs = renew === undefined ? undefined : new Date(renew).getTime();
  return {
    node,
    ...(request ? { request } : {}),
    ...(done ? { done } : {}),
    ...(grant ? { grant } : {}),
    ...(progress ? { progress } : {}),
    ...(renewedAtMs !== undefined && !Number.isNaN(renewedAtMs) ? { renewedAtMs } : {}),
  };
}

/** True when `done` finishes `request` (the same request, by its time). */
export const isDoneFor = (state: LeaseState): boolean =>
  state.request !== undefined && state.done?.requestedAt === state.request.requestedAt;

/** True when the grant answers the current request. */
export const isGrantFor = (state: LeaseState): boolean =>
  state.request !== undefined && state.grant?.requestedAt === state.request.requestedAt;
