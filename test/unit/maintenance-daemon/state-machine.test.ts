/**
 * The node daemon's state machine against an in-memory node (host files, boot ID, host state) and
 * Lease, with the operator's side played by the test: the Kustodian and Kured flows end to end, a
 * failing script, a grant taken away, and a daemon that only ever sees the world (nothing in memory),
 * so any number of restarts between ticks changes nothing.
 */
import { describe, expect, it } from '@jest/globals';
import type { LeaseState } from '../../../src/api/maintenance-protocol.js';
import { effectiveProtocols } from '../../../src/api/maintenance-settings.js';
import { decide, type HostState, type Observation } from '../../../src/maintenance-daemon/state-machine.js';

const REQUIRED = '/var/maintenance-required';
const IN_PROGRESS = '/var/maintenance-in-progress';
const SENTINEL = '/var/run/reboot-required';

class World {
  files = new Set<string>();
  bootId = 'boot-1';
  host: HostState = {};
  lease: LeaseState = { node: 'n1' };
  now = Date.parse('2026-01-01T00:00:00Z');
  reboots = 0;
  readonly protocols = effectiveProtocols({ protocols: { reboot: {} } });

  observe(): Observation {
    return {
      protocols: this.protocols,
      canReboot: true,
      requiredPresent: this.files.has(REQUIRED),
      inProgressPresent: this.files.has(IN_PROGRESS),
      rebootRequired: this.files.has(SENTINEL),
      bootId: this.bootId,
      host: this.host,
      lease: this.lease,
      now: this.now,
    };
  }

  /** One daemon tick: decide from the world, apply every action to it. */
  tick(): string {
    this.now += 1000;
    const { actions, progress } = decide(this.observe());
    for (const a of actions) {
      if (a.kind === 'request') this.lease = { ...this.lease, request: a.request };
      if (a.kind === 'clear') {
        const { request: _r, done: _d, ...rest } = this.lease;
        this.lease = rest;
      }
      if (a.kind === 'reportDone') this.lease = { ...this.lease, done: a.done };
      if (a.kind === 'touchInProgress') this.files.add(IN_PROGRESS);
      if (a.kind === 'removeInProgress') this.files.delete(IN_PROGRESS);
      if (a.kind === 'writeHostState') this.host = a.host;
      if (a.kind === 'reboot') {
        this.reboots++;
        this.bootId = `boot-${this.reboots + 1}`;
        this.files.delete(SENTINEL);
      }
    }
    return progress;
  }

  grant(phase: 'granted' | 'drained'): void {
    const requestedAt = this.lease.request!.requestedAt;
    this.lease = {
      ...this.lease,
      grant: { policy: 'p', requestedAt, grantedAt: new Date(this.now).toISOString(), phase },
    };
  }

  release(): void {
    const { grant: _g, ...rest } = this.lease;
    this.lease = rest;
  }
}

describe('the Kustodian flow', () => {
  it('asks, waits for the drained grant, marks in progress, reports done once the script removed the file, then clears', () => {
    const w = new World();
    expect(w.tick()).toBe('idle');
    w.files.add(REQUIRED);
    w.tick();
    expect(w.lease.request?.protocol).toBe('maintenance');
    const requestedAt = w.lease.request!.requestedAt;
    expect(w.tick()).toBe('waiting for a slot');
    w.grant('granted');
    expect(w.tick()).toBe('slot granted; waiting for cordon and drain');
    expect(w.files.has(IN_PROGRESS)).toBe(false);
    w.grant('drained');
    w.tick();
    expect(w.files.has(IN_PROGRESS)).toBe(true);
    // The script works; the daemon waits (and keeps the request as it was).
    expect(w.tick()).toContain('waiting for /var/maintenance-required to be removed');
    expect(w.lease.request!.requestedAt).toBe(requestedAt);
    w.files.delete(REQUIRED);
    w.tick();
    expect(w.files.has(IN_PROGRESS)).toBe(false);
    expect(w.lease.done?.requestedAt).toBe(requestedAt);
    expect(w.tick()).toBe('done; waiting for the operator to release the slot');
    w.release();
    w.tick();
    expect(w.lease).toEqual({ node: 'n1' });
    expect(w.tick()).toBe('idle');
  });

  it('a failing script leaves the required file: in progress for ever, never done', () => {
    const w = new World();
    w.files.add(REQUIRED);
    w.tick();
    w.grant('drained');
    for (let i = 0; i < 20; i++) w.tick();
    expect(w.files.has(IN_PROGRESS)).toBe(true);
    expect(w.lease.done).toBeUndefined();
  });

  it('a grant taken away (TTL, a person) removes the in-progress file and waits in the queue again', () => {
    const w = new World();
    w.files.add(REQUIRED);
    w.tick();
    w.grant('drained');
    w.tick();
    w.release();
    expect(w.tick()).toBe('waiting for a slot');
    expect(w.files.has(IN_PROGRESS)).toBe(false);
    expect(w.lease.request).toBeDefined();
  });

  it('withdraws a request whose file went away before the grant', () => {
    const w = new World();
    w.files.add(REQUIRED);
    w.tick();
    w.files.delete(REQUIRED);
    expect(w.tick()).toBe('withdrawn');
    expect(w.lease.request).toBeUndefined();
  });
});

describe('the Kured flow', () => {
  it('asks with the boot ID, reboots once when drained, and a new boot ID confirms it', () => {
    const w = new World();
    w.files.add(SENTINEL);
    w.tick();
    expect(w.lease.request).toMatchObject({ protocol: 'reboot', bootId: 'boot-1' });
    w.tick();
    expect(w.reboots).toBe(0);
    w.grant('drained');
    w.tick();
    expect(w.reboots).toBe(1);
    expect(w.host.rebootingFrom).toBe('boot-1');
    expect(w.tick()).toBe('rebooted (boot ID boot-2)');
    expect(w.lease.done).toBeDefined();
    w.tick();
    expect(w.reboots).toBe(1);
    w.release();
    w.tick();
    expect(w.lease.request).toBeUndefined();
    expect(w.host).toEqual({});
    w.tick();
    expect(w.lease.request).toBeUndefined();
  });

  it('never reboots without a drained grant for its own request', () => {
    const w = new World();
    w.files.add(SENTINEL);
    w.tick();
    w.grant('granted');
    for (let i = 0; i < 5; i++) w.tick();
    expect(w.reboots).toBe(0);
    w.lease = { ...w.lease, grant: { ...w.lease.grant!, requestedAt: '2020-01-01T00:00:00Z', phase: 'drained' } };
    for (let i = 0; i < 5; i++) w.tick();
    expect(w.reboots).toBe(0);
  });

  it('a daemon that restarts after noting the reboot but before it happened reboots (once) again', () => {
    const w = new World();
    w.files.add(SENTINEL);
    w.tick();
    w.grant('drained');
    // Killed between writing the host state and the reboot: the world has the note, the boot ID is unchanged.
    w.host = { rebootingFrom: w.bootId };
    w.tick();
    expect(w.reboots).toBe(1);
    w.tick();
    expect(w.lease.done).toBeDefined();
  });
});

it('does nothing when no policy serves the node or a protocol is off', () => {
  const w = new World();
  w.files.add(REQUIRED);
  const off = { ...w.observe(), protocols: undefined };
  expect(decide(off)).toEqual({ actions: [], progress: 'no MaintenancePolicy serves this node' });
  const noReboot = { ...w.observe(), requiredPresent: false, rebootRequired: true, canReboot: false };
  expect(decide(noReboot).actions).toEqual([]);
});
