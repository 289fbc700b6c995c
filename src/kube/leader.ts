/**
 * Leader election on a coordination.k8s.io Lease, with client-go's semantics:
 * - try to acquire every retryPeriod (jittered); a lease held by someone else counts as expired
 *   only when its record has not changed for leaseDuration by OUR clock (no clock-skew trust);
 * - once leading, renew every retryPeriod; if no renewal succeeds for renewDeadline (< leaseDuration,
 *   so we stop before anyone else may take over) leadership is lost: onStoppedLeading, and the
 *   caller exits;
 * - writes carry the resourceVersion read, so a 409 means another candidate won the race;
 * - times are V1MicroTime (a plain Date has 3 fractional digits and the API server rejects it);
 * - stop() while leading releases the lease (empty holder, 1 s duration) so a successor takes over
 *   within one retryPeriod instead of waiting out the lease.
 */
import { V1MicroTime, type CoordinationV1Api, type V1Lease, type V1LeaseSpec } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { jittered, systemClock, type Clock, type TimerHandle } from './clock.js';
import { errorMessage, isNotFound } from './errors.js';
import type { RuntimeMetrics } from './metrics.js';

export interface LeaderElectorOptions {
  coordination: CoordinationV1Api;
  namespace: string;
  /** The Lease's name. */
  name: string;
  /** Unique per process (client-go: `<hostname>_<uuid>`). */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  jitterFactor?: number;
  /** Called once this process holds the lease. */
  onStartedLeading: () => void;
  /** Called when leadership is lost (renewal failed); not called after stop(). */
  onStoppedLeading: () => void;
  /** Called when the observed holder changes (including to us). */
  onNewLeader?: (identity: string) => void;
  logger: Logger;
  metrics?: RuntimeMetrics;
  clock?: Clock;
}

function microTime(value: unknown): V1MicroTime | undefined {
  if (value instanceof V1MicroTime) return value;
  if (value instanceof Date) return new V1MicroTime(value.getTime());
  if (typeof value === 'string' && value) return new V1MicroTime(Date.parse(value));
  return undefined;
}

/** What identifies a lease record for "has it changed since we looked": everything but resourceVersion. */
function recordOf(spec: V1LeaseSpec | undefined): string {
  const s = spec ?? {};
  return JSON.stringify([
    s.holderIdentity ?? '',
    s.leaseDurationSeconds,
    String(s.acquireTime ?? ''),
    String(s.renewTime ?? ''),
    s.leaseTransitions,
  ]);
}

export class LeaderElector {
  private readonly o: Required<
    Pick<LeaderElectorOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'jitterFactor'>
  > &
    LeaderElectorOptions;
  private readonly clock: Clock;
  private readonly log: Logger;
  private observedRecord = '';
  private observedAt = 0;
  private observedHolder = '';
  /** The lease as our last successful write returned it (release needs its resourceVersion). */
  private lease: V1Lease | undefined;
  private leading = false;
  private stopped = false;
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;

  constructor(options: LeaderElectorOptions) {
    this.o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, jitterFactor: 1.2, ...options };
    if (this.o.renewDeadlineMs >= this.o.leaseDurationMs)
      throw new Error('renewDeadlineMs must be less than leaseDurationMs');
    this.clock = options.clock ?? systemClock;
    this.log = options.logger.child({ lease: `${options.namespace}/${options.name}`, identity: options.identity });
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Campaigns, then renews while leading; resolves when leadership is lost or stop() is called. */
  run(): Promise<void> {
    this.running ??= this.campaign();
    return this.running;
  }

  /** Stops campaigning or renewing and, if leading, releases the lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
    if (this.leading) await this.release();
  }

  private async campaign(): Promise<void> {
    this.log.info('waiting to acquire the lease');
    while (!this.stopped && !(await this.tryAcquireOrRenew()))
      await this.pause(jittered(this.o.retryPeriodMs, this.o.jitterFactor));
    if (this.stopped) return;
    this.setLeading(true);
    this.log.info('acquired the lease; leading');
    this.o.onStartedLeading();
    while (!this.stopped) {
      await this.pause(this.o.retryPeriodMs);
      if (this.stopped || (await this.renewWithinDeadline())) continue;
      if (this.stopped) return;
      this.setLeading(false);
      this.log.error({ renewDeadlineMs: this.o.renewDeadlineMs }, 'could not renew the lease in time; leadership lost');
      this.o.onStoppedLeading();
      return;
    }
  }

  /** Retries renewal every retryPeriod until it succeeds or renewDeadline has passed. */
  private async renewWithinDeadline(): Promise<boolean> {
    const deadline = this.clock.now() + this.o.renewDeadlineMs;
    while (!this.stopped) {
      const remaining = deadline - this.clock.now();
      if (remaining <= 0) return false;
      if (await this.withTimeout(this.tryAcquireOrRenew(), remaining)) return true;
      if (deadline - this.clock.now() > 0)
        await this.pause(Math.min(this.o.retryPeriodMs, deadline - this.clock.now()));
    }
    return true; // stopping: the caller releases
  }

  /** One attempt; true when we hold the lease afterwards. Never throws. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { coordination, namespace, name, identity } = this.o;
    const now = this.clock.now();
    const leaseDurationSeconds = Math.ceil(this.o.leaseDurationMs / 1000);
    let current: V1Lease;
    try {
      current = await coordination.readNamespacedLease({ name, namespace });
    } catch (e) {
      if (!isNotFound(e)) {
        this.log.warn({ err: errorMessage(e) }, 'could not read the lease');
        return false;
      }
      const spec: V1LeaseSpec = {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: new V1MicroTime(now),
        renewTime: new V1MicroTime(now),
        leaseTransitions: 0,
      };
      try {
        this.observe(
          await coordination.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec } }),
        );
        return true;
      } catch (createError) {
        this.log.debug({ err: errorMessage(createError) }, 'lost the race to create the lease');
        return false;
      }
    }
    this.observe(current);
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const durationMs = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    if (holder && holder !== identity && this.observedAt + durationMs > now) return false;
    const renewing = holder === identity;
    const acquireTime = renewing ? microTime(spec.acquireTime) : undefined;
    const next: V1LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds,
      acquireTime: acquireTime ?? new V1MicroTime(now),
      renewTime: new V1MicroTime(now),
      leaseTransitions: renewing ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
    };
    try {
      this.observe(await coordination.replaceNamespacedLease({ name, namespace, body: { ...current, spec: next } }));
      return true;
    } catch (e) {
      this.log.debug(
        { err: errorMessage(e) },
        renewing ? 'could not renew the lease' : 'lost the race to take the lease',
      );
      return false;
    }
  }

  /** Empty holder, 1 s duration: others may take over at once (client-go's ReleaseOnCancel). */
  private async release(): Promise<void> {
    const lease = this.lease;
    if (!lease || lease.spec?.holderIdentity !== this.o.identity) return;
    const now = new V1MicroTime(this.clock.now());
    const spec: V1LeaseSpec = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: lease.spec?.leaseTransitions ?? 0,
    };
    try {
      await this.o.coordination.replaceNamespacedLease({
        name: this.o.name,
        namespace: this.o.namespace,
        body: { ...lease, spec },
      });
      this.log.info('released the lease');
    } catch (e) {
      this.log.warn({ err: errorMessage(e) }, 'could not release the lease; the next leader waits for it to expire');
    }
    this.setLeading(false);
  }

  private observe(lease: V1Lease): void {
    const record = recordOf(lease.spec);
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = this.clock.now();
    }
    if (lease.spec?.holderIdentity === this.o.identity) this.lease = lease;
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder !== this.observedHolder) {
      this.observedHolder = holder;
      if (holder) this.o.onNewLeader?.(holder);
    }
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.o.metrics?.leading(this.o.name, leading);
  }

  /** A sleep that stop() cuts short. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolvePause) => {
      let timer: TimerHandle | undefined;
      const done = (): void => {
        if (timer !== undefined) this.clock.clearTimeout(timer);
        this.wake = undefined;
        resolvePause();
      };
      this.wake = done;
      timer = this.clock.setTimeout(done, ms);
    });
  }

  /** The attempt's result, or false if it has not answered within `ms` (the deadline wins). */
  private withTimeout(attempt: Promise<boolean>, ms: number): Promise<boolean> {
    return new Promise((resolveAttempt) => {
      const timer = this.clock.setTimeout(() => resolveAttempt(false), ms);
      void attempt.then((ok) => {
        this.clock.clearTimeout(timer);
        resolveAttempt(ok);
      });
    });
  }
}
