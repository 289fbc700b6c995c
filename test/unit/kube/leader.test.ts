/**
 * Leader election timing with a fake clock and an in-memory Lease API: a lease held by someone
 * else is taken only after it has looked unchanged for leaseDuration by our clock (whatever its
 * renewTime says), a 409 loses the race, and a leader that cannot renew for renewDeadline stops
 * leading through its callback.
 */
import { describe, expect, it } from '@jest/globals';
import type { CoordinationV1Api, V1Lease } from '@kubernetes/client-node';
import { LeaderElector } from '../../../src/kube/leader.js';
import { silentLogger } from '../../../src/kube/logger.js';
import { FakeClock } from './fake-clock.js';

const apiError = (code: number, reason: string): Error =>
  Object.assign(new Error(reason), { code, body: JSON.stringify({ reason, code }) });

/** One Lease with optimistic concurrency, plus switches to make calls fail. */
class FakeLeases {
  lease: V1Lease | undefined;
  rv = 1;
  failReads = false;
  conflictNextWrite = false;
  writes = 0;

  api(): CoordinationV1Api {
    const api = {
      readNamespacedLease: async () => {
        if (this.failReads) throw apiError(500, 'InternalError');
        if (!this.lease) throw apiError(404, 'NotFound');
        return structuredClone(this.lease);
      },
      createNamespacedLease: async ({ body }: { body: V1Lease }) => {
        if (this.lease) throw apiError(409, 'AlreadyExists');
        return this.store(body);
      },
      replaceNamespacedLease: async ({ body }: { body: V1Lease }) => {
        if (this.conflictNextWrite || body.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) {
          this.conflictNextWrite = false;
          throw apiError(409, 'Conflict');
        }
        return this.store(body);
      },
    };
    return api as unknown as CoordinationV1Api;
  }

  private store(body: V1Lease): V1Lease {
    this.writes++;
    // What the API server sends back: JSON, times as strings.
    this.lease = JSON.parse(
      JSON.stringify({ ...body, metadata: { ...body.metadata, resourceVersion: String(++this.rv) } }),
    ) as V1Lease;
    return structuredClone(this.lease);
  }
}

function elector(leases: FakeLeases, clock: FakeClock, identity: string) {
  const calls: string[] = [];
  const e = new LeaderElector({
    coordination: leases.api(),
    namespace: 'ns',
    name: 'lease',
    identity,
    jitterFactor: 0,
    logger: silentLogger(),
    clock,
    onStartedLeading: () => calls.push('started'),
    onStoppedLeading: () => calls.push('stopped'),
  });
  return { e, calls };
}

describe('LeaderElector', () => {
  it('waits out a foreign lease by its own clock, however old its renewTime claims to be', async () => {
    const clock = new FakeClock();
    const leases = new FakeLeases();
    leases.lease = {
      metadata: { name: 'lease', namespace: 'ns', resourceVersion: '1' },
      spec: {
        holderIdentity: 'old-leader',
        leaseDurationSeconds: 15,
        renewTime: '2001-01-01T00:00:00.000000Z' as unknown as Date,
      },
    };
    const { e, calls } = elector(leases, clock, 'me');
    void e.run();
    await clock.advance(0);
    expect(calls).toEqual([]);
    await clock.advance(14_000);
    expect(calls).toEqual([]);
    await clock.advance(2_000); // the retry after 15 s of an unchanged record takes it
    expect(calls).toEqual(['started']);
    expect(leases.lease?.spec?.holderIdentity).toBe('me');
    expect(leases.lease?.spec?.leaseTransitions).toBe(1);
    expect(String(leases.lease?.spec?.renewTime)).toMatch(/\.\d{6}Z$/);
    await e.stop();
    expect(leases.lease?.spec?.holderIdentity).toBe('');
    expect(leases.lease?.spec?.leaseDurationSeconds).toBe(1);
  });

  it('a renewal by the holder restarts the wait; a lost race (409) is not leadership', async () => {
    const clock = new FakeClock();
    const leases = new FakeLeases();
    const holder = elector(leases, clock, 'holder');
    void holder.e.run();
    await clock.advance(0);
    expect(holder.calls).toEqual(['started']);
    const other = elector(leases, clock, 'other');
    void other.e.run();
    await clock.advance(60_000);
    expect(other.calls).toEqual([]);
    expect(leases.lease?.spec?.holderIdentity).toBe('holder');

    // The holder vanishes without releasing; `other` races and loses its first write.
    await holder.e.stop().catch(() => undefined);
    leases.lease!.spec = { ...leases.lease!.spec, holderIdentity: 'holder', leaseDurationSeconds: 15 };
    leases.lease!.spec!.renewTime = '2099-01-01T00:00:00.000000Z' as unknown as Date;
    leases.conflictNextWrite = true;
    await clock.advance(15_000);
    expect(other.calls).toEqual([]);
    while (leases.conflictNextWrite) await clock.advance(100); // its first write after expiry meets a 409
    expect(other.calls).toEqual([]);
    expect(other.e.isLeader).toBe(false);
    await clock.advance(2_000);
    expect(other.calls).toEqual(['started']);
    expect(leases.lease?.spec?.holderIdentity).toBe('other');
    await other.e.stop();
  });

  it('stops leading through the callback when renewal fails for renewDeadline, not before', async () => {
    const clock = new FakeClock();
    const leases = new FakeLeases();
    const { e, calls } = elector(leases, clock, 'me');
    const ended = e.run();
    await clock.advance(0);
    expect(e.isLeader).toBe(true);
    leases.failReads = true;
    await clock.advance(2_000 + 9_000);
    expect(calls).toEqual(['started']);
    expect(e.isLeader).toBe(true);
    await clock.advance(1_500);
    expect(calls).toEqual(['started', 'stopped']);
    expect(e.isLeader).toBe(false);
    await ended;
    const writes = leases.writes;
    await e.stop(); // nothing to release: we no longer lead
    expect(leases.writes).toBe(writes);
  });
});
