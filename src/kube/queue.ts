/**
 * A keyed work queue with client-go's semantics, and the workers that drain it.
 *
 * - A key waits in the queue at most once (`dirty`), however many events name it.
 * - A key being reconciled (`processing`) is never handed to a second worker; an add meanwhile
 *   marks it dirty and it is queued again when the first worker calls `done`.
 * - `addAfter` keeps only the earliest pending timer per key; `addRateLimited` waits
 *   base·2^failures (capped) per key, and `forget` resets the count after a success.
 * - `shutdown` drops queued keys and makes `get` return undefined; `drain` waits for in-flight work.
 * - `throttle` (the API server answered 429) requeues the key after the server's Retry-After and
 *   hands out no key at all until then: the whole controller backs off, not only that key, since
 *   priority and fairness limits the client, not one object.
 * - `cancelAfter` drops a key's pending timer (a newer reconcile said there is nothing to look at).
 *
 * Only this module's logic decides ordering, so it is unit-tested with a fake Clock.
 */
import type { Logger } from 'pino';
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import { errorMessage, isTooManyRequests, retryAfterMs } from './errors.js';
import type { RuntimeMetrics } from './metrics.js';

export interface WorkQueueOptions {
  /** Names the queue in metrics and logs (usually the controller's name). */
  name: string;
  /** First retry delay of addRateLimited (client-go: 5 ms). */
  baseDelayMs?: number;
  /** Cap of the per-key exponential backoff (client-go: 1000 s). */
  maxDelayMs?: number;
  clock?: Clock;
  metrics?: RuntimeMetrics;
}

export class WorkQueue {
  readonly name: string;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly clock: Clock;
  private readonly metrics: RuntimeMetrics | undefined;
  /** Keys ready to be handed out, in arrival order (a Set is an O(1) ordered queue here). */
  private readonly ready = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly waiting: ((key: string | undefined) => void)[] = [];
  private readonly timers = new Map<string, { at: number; handle: TimerHandle }>();
  private readonly failures = new Map<string, number>();
  private readonly idleWaiters: (() => void)[] = [];
  private stopped = false;
  /** No key is handed out before this time (ms since the epoch): the API server asked us to wait. */
  private pausedUntil = 0;
  private resumeTimer: TimerHandle | undefined;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 1_000_000;
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics;
  }

  /** Keys waiting to be handed out (not counting those being processed). */
  get length(): number {
    return this.ready.size;
  }

  get shuttingDown(): boolean {
    return this.stopped;
  }

  /** Keys currently held by a worker. */
  get inFlight(): number {
    return this.processing.size;
  }

  add(key: string): void {
    if (this.stopped || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.metrics?.queueAdded(this.name);
    if (this.processing.has(key)) return;
    this.ready.add(key);
    this.handOut();
  }

  /** Adds `key` after `delayMs`; an earlier pending add of the same key wins over a later one. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + delayMs;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) this.clock.clearTimeout(pending.handle);
    const handle = this.clock.setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, { at, handle });
  }

  /** Adds `key` after its next backoff delay: base·2^(failures so far), capped. */
  addRateLimited(key: string): void {
    if (this.stopped) return;
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    this.metrics?.queueRetried(this.name);
    this.addAfter(key, this.backoffMs(failures));
  }

  /** The delay addRateLimited would use for the n-th failure (0-based). */
  backoffMs(failures: number): number {
    return Math.min(this.baseDelayMs * 2 ** failures, this.maxDelayMs);
  }

  /**
   * The API server throttled `key`'s reconcile (429): the key comes back after `delayMs` (counted as
   * a failure, so a server that keeps refusing gets the growing backoff once it exceeds `delayMs`),
   * and no key is handed out until then.
   */
  throttle(key: string, delayMs: number): number {
    if (this.stopped) return 0;
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    this.metrics?.queueRetried(this.name);
    const delay = Math.max(delayMs, this.backoffMs(failures));
    this.addAfter(key, delay);
    this.pause(delayMs);
    return delay;
  }

  /** Hands out no key for `delayMs` (a longer pause already running wins). */
  private pause(delayMs: number): void {
    const until = this.clock.now() + delayMs;
    if (delayMs <= 0 || until <= this.pausedUntil) return;
    this.pausedUntil = until;
    if (this.resumeTimer !== undefined) this.clock.clearTimeout(this.resumeTimer);
    this.resumeTimer = this.clock.setTimeout(() => {
      this.resumeTimer = undefined;
      this.pausedUntil = 0;
      this.handOut();
    }, delayMs);
  }

  /** True while a throttle pause holds every key back. */
  get paused(): boolean {
    return this.resumeTimer !== undefined;
  }

  /** Drops the pending addAfter timer of `key`, if any. */
  cancelAfter(key: string): void {
    const pending = this.timers.get(key);
    if (!pending) return;
    this.clock.clearTimeout(pending.handle);
    this.timers.delete(key);
  }

  /** Resets the backoff of `key` (call after a successful reconcile). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to process, waiting for one; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    const key = this.paused ? undefined : this.take();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolveKey) => this.waiting.push(resolveKey));
  }

  /** Releases `key` after processing; if it was added meanwhile it goes back in the queue. */
  done(key: string): void {
    this.processing.delete(key);
    if (!this.stopped && this.dirty.has(key)) {
      this.ready.add(key);
      this.handOut();
    }
    this.reportDepth();
    if (this.processing.size === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Stops accepting keys, drops queued ones and pending timers, and releases idle workers. */
  shutdown(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.resumeTimer !== undefined) this.clock.clearTimeout(this.resumeTimer);
    this.resumeTimer = undefined;
    for (const { handle } of this.timers.values()) this.clock.clearTimeout(handle);
    this.timers.clear();
    this.ready.clear();
    this.dirty.clear();
    for (const wake of this.waiting.splice(0)) wake(undefined);
    this.reportDepth();
  }

  /** Resolves true once no key is being processed, or false after `timeoutMs`. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.processing.size === 0) return Promise.resolve(true);
    return new Promise((resolveDrain) => {
      const timer = this.clock.setTimeout(() => resolveDrain(false), timeoutMs);
      this.idleWaiters.push(() => {
        this.clock.clearTimeout(timer);
        resolveDrain(true);
      });
    });
  }

  private take(): string | undefined {
    const next = this.ready.values().next();
    if (next.done) return undefined;
    const key = next.value;
    this.ready.delete(key);
    this.dirty.delete(key);
    this.processing.add(key);
    this.reportDepth();
    return key;
  }

  private handOut(): void {
    while (!this.paused && this.waiting.length > 0 && this.ready.size > 0) {
      const wake = this.waiting.shift();
      wake?.(this.take());
    }
    this.reportDepth();
  }

  private reportDepth(): void {
    this.metrics?.queueDepth(this.name, this.ready.size);
  }
}

/**
 * What a reconcile returns: nothing (done until the next event) or a time to look again, with why
 * (logged at debug level: which timer keeps waking a key).
 */
export type ReconcileResult = { requeueAfterMs?: number; reason?: string } | undefined;

/** The wait after a 429 that names none (the API server's priority and fairness says 1 s). */
export const THROTTLED_DEFAULT_MS = 1_000;
/** A Retry-After longer than this is not believed (a controller that stops for an hour helps nobody). */
export const THROTTLED_MAX_MS = 60_000;
/** Reconciles one key; a thrown error means "retry with backoff". */
// Promise<void> too: a reconcile that never asks to look again may say so by returning nothing.
export type Reconcile = (key: string) => Promise<ReconcileResult> | Promise<void>;

export interface WorkerOptions {
  logger: Logger;
  metrics?: RuntimeMetrics;
  clock?: Clock;
  /**
   * A reconcile that returns nothing also drops the key's pending requeue timer: the reconcile saw
   * the newest state and found nothing to look at again, so an earlier one's "look again at T" is
   * obsolete (the NodeOp controller: a node's safety recheck would otherwise wake a finished NodeOp).
   */
  successCancelsRequeue?: boolean;
}

/**
 * Runs `count` workers over `queue`; resolves once the queue is shut down and every worker has
 * finished its current key. Results: success → forget; requeueAfterMs → forget and addAfter;
 * throw → addRateLimited; 429 from the API server → the queue's throttle, with a warning and
 * `skyhook_api_throttled_total{controller}` (one place for every controller).
 */
export async function runWorkers(
  queue: WorkQueue,
  count: number,
  reconcile: Reconcile,
  options: WorkerOptions,
): Promise<void> {
  const clock = options.clock ?? systemClock;
  const worker = async (): Promise<void> => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      const started = clock.now();
      options.metrics?.reconcileStarted(queue.name);
      let result: 'success' | 'requeue_after' | 'error';
      try {
        const outcome = await reconcile(key);
        queue.forget(key);
        if (outcome && outcome.requeueAfterMs !== undefined) {
          queue.addAfter(key, outcome.requeueAfterMs);
          result = 'requeue_after';
          options.logger.debug({ key, afterMs: outcome.requeueAfterMs, reason: outcome.reason }, 'requeue');
        } else {
          if (options.successCancelsRequeue) queue.cancelAfter(key);
          result = 'success';
        }
      } catch (e) {
        result = 'error';
        retryFailed(queue, key, e, options);
      } finally {
        queue.done(key);
      }
      options.metrics?.reconcileDone(queue.name, result, (clock.now() - started) / 1000);
    }
  };
  await Promise.all(Array.from({ length: count }, worker));
}

/** A failed reconcile's retry: after the API server's Retry-After when it throttled us, else with backoff. */
function retryFailed(queue: WorkQueue, key: string, e: unknown, options: WorkerOptions): void {
  if (isTooManyRequests(e)) {
    const asked = Math.min(retryAfterMs(e) ?? THROTTLED_DEFAULT_MS, THROTTLED_MAX_MS);
    const delayMs = queue.throttle(key, asked);
    options.metrics?.apiThrottled(queue.name);
    options.logger.warn(
      { controller: queue.name, key, delayMs, pausedMs: asked, err: errorMessage(e) },
      'the API server is throttling requests (429); this controller pauses and retries after its Retry-After',
    );
    return;
  }
  queue.addRateLimited(key);
  options.logger.error(
    { key, retries: queue.numRequeues(key), err: errorMessage(e) },
    'reconcile failed; retrying with backoff',
  );
}
