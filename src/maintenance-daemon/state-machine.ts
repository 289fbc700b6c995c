/**
 * The node daemon's decisions, pure: from what it observes now (its host files, its boot ID, its
 * host state file, its Lease, the policy serving the node) to the next writes. Nothing is kept in
 * memory between ticks, so a daemon killed at any moment decides the same way when it starts again:
 * every action is idempotent, and each tick's actions leave a state the next tick continues from.
 *
 * Kustodian:  required file → request → (operator: cordon, drain, grant `drained`) → touch the
 *             in-progress file → wait until the required file is gone → remove the in-progress file
 *             → done → (operator: uncordon, remove the grant) → clear.
 * Kured:      sentinel → request (with the boot ID) → grant `drained` → note the boot ID in the host
 *             state file → reboot delay → reboot → (after the boot) a new boot ID confirms → done
 *             → (operator: uncordon, release) → clear.
 * A grant that disappears before done (TTL, a person's release) puts the request back in the queue
 * and removes the in-progress file: the script must not believe the node is out of service.
 */
import type { EffectiveProtocols } from '../api/maintenance-settings.js';
import type { LeaseState, MaintenanceDone, MaintenanceRequest } from '../api/maintenance-protocol.js';

/** What the daemon keeps on the host (beside the protocol's own files). */
export interface HostState {
  /** The boot ID before the reboot this daemon started; a different one after a boot confirms it. */
  rebootingFrom?: string;
}

export interface Observation {
  /** The serving policy's protocols; undefined: no policy serves this node. */
  protocols: EffectiveProtocols | undefined;
  /** Whether this daemon can reboot the node (a reboot method is configured). */
  canReboot: boolean;
  requiredPresent: boolean;
  inProgressPresent: boolean;
  rebootRequired: boolean;
  bootId: string;
  host: HostState;
  lease: LeaseState;
  now: number;
}

export type DaemonAction =
  | { kind: 'request'; request: MaintenanceRequest }
  /** Remove request and done from the Lease (a withdrawn or finished request). */
  | { kind: 'clear' }
  | { kind: 'touchInProgress' }
  | { kind: 'removeInProgress' }
  | { kind: 'writeHostState'; host: HostState }
  | { kind: 'reboot'; delayMs: number }
  | { kind: 'reportDone'; done: MaintenanceDone };

export interface Decision {
  actions: DaemonAction[];
  /** What the daemon waits for, shown in the policy's status. */
  progress: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

function idle(o: Observation): Decision {
  const actions: DaemonAction[] = [];
  // Leftovers of a request that ended while the daemon was down.
  if (o.inProgressPresent) actions.push({ kind: 'removeInProgress' });
  if (o.host.rebootingFrom !== undefined) actions.push({ kind: 'writeHostState', host: {} });
  const p = o.protocols;
  if (p?.maintenance && o.requiredPresent) {
    actions.push({ kind: 'request', request: { protocol: 'maintenance', requestedAt: iso(o.now), bootId: o.bootId } });
    return { actions, progress: `${p.maintenance.requiredPath} present: asking for a maintenance slot` };
  }
  if (p?.reboot && o.canReboot && o.rebootRequired) {
    actions.push({ kind: 'request', request: { protocol: 'reboot', requestedAt: iso(o.now), bootId: o.bootId } });
    return { actions, progress: 'reboot required: asking for a reboot slot' };
  }
  return { actions, progress: p ? 'idle' : 'no MaintenancePolicy serves this node' };
}

function maintenanceStep(o: Observation, drained: boolean, granted: boolean, request: MaintenanceRequest): Decision {
  const required = o.protocols?.maintenance?.requiredPath ?? 'the required file';
  if (!drained) {
    const actions: DaemonAction[] = o.inProgressPresent ? [{ kind: 'removeInProgress' }] : [];
    if (!granted && !o.requiredPresent) return { actions: [...actions, { kind: 'clear' }], progress: 'withdrawn' };
    return { actions, progress: granted ? 'slot granted; waiting for cordon and drain' : 'waiting for a slot' };
  }
  if (o.requiredPresent) {
    const actions: DaemonAction[] = o.inProgressPresent ? [] : [{ kind: 'touchInProgress' }];
    return { actions, progress: `maintenance in progress: waiting for ${required} to be removed` };
  }
  const actions: DaemonAction[] = o.inProgressPresent ? [{ kind: 'removeInProgress' }] : [];
  actions.push({ kind: 'reportDone', done: { requestedAt: request.requestedAt, completedAt: iso(o.now) } });
  return { actions, progress: `${required} removed: maintenance done` };
}

function rebootStep(o: Observation, drained: boolean, granted: boolean, request: MaintenanceRequest): Decision {
  const from = o.host.rebootingFrom;
  if (!drained) {
    if (!granted && from === undefined && !o.rebootRequired)
      return { actions: [{ kind: 'clear' }], progress: 'withdrawn' };
    return { actions: [], progress: granted ? 'slot granted; waiting for cordon and drain' : 'waiting for a slot' };
  }
  if (from !== undefined && from !== o.bootId) {
    const done = { requestedAt: request.requestedAt, completedAt: iso(o.now) };
    return { actions: [{ kind: 'reportDone', done }], progress: `rebooted (boot ID ${o.bootId})` };
  }
  if (!o.canReboot) return { actions: [], progress: 'reboot granted, but this daemon has no reboot method' };
  const delayMs = o.protocols?.reboot?.rebootDelayMs ?? 0;
  const actions: DaemonAction[] =
    from === undefined ? [{ kind: 'writeHostState', host: { rebootingFrom: o.bootId } }] : [];
  actions.push({ kind: 'reboot', delayMs });
  return { actions, progress: `rebooting (boot ID ${o.bootId})` };
}

export function decide(o: Observation): Decision {
  const { request, grant, done } = o.lease;
  if (!request) return idle(o);
  const granted = grant !== undefined && grant.requestedAt === request.requestedAt;
  if (done?.requestedAt === request.requestedAt) {
    if (granted) return { actions: [], progress: 'done; waiting for the operator to release the slot' };
    const actions: DaemonAction[] = o.host.rebootingFrom !== undefined ? [{ kind: 'writeHostState', host: {} }] : [];
    return { actions: [...actions, { kind: 'clear' }], progress: 'released' };
  }
  const served = request.protocol === 'maintenance' ? o.protocols?.maintenance : o.protocols?.reboot;
  if (!served && !granted) return { actions: [{ kind: 'clear' }], progress: `the ${request.protocol} protocol is off` };
  const drained = granted && grant.phase === 'drained';
  return request.protocol === 'maintenance'
    ? maintenanceStep(o, drained, granted, request)
    : rebootStep(o, drained, granted, request);
}
