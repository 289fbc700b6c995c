/**
 * An informer: a local cache of the objects at one list/watch path, kept current by a watch, that
 * calls add/update/delete handlers (which should only enqueue keys).
 *
 * Unlike client-node's makeInformer (see reference/ts-operator-ecosystem.md §1.3) it
 * - applies the label and field selectors to the list AND the watch;
 * - never stays dead: every watch end or error restarts it, errors with capped exponential backoff,
 *   and a generation counter makes sure a second error from the same watch cannot restart it twice;
 * - resumes from the last resourceVersion, lists again on 410 Gone (deletes for what vanished);
 * - lists again every `resyncMs`, firing update for every object, as a safety net for watches that
 *   go quiet without an error;
 * - becomes `synced` only after a list succeeded (readiness uses this).
 *
 * List and watch come through ListWatch (list-watch.ts), so the restart logic is unit-tested with a
 * scripted fake. This is the reflector (client-go's reflector.go); the cache and handlers are
 * informer-store.ts. `lastSyncResourceVersion` is the newest resourceVersion the cache reflects: an
 * object written at or before it and absent from the cache was deleted since (write-expectations.ts).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import { errorMessage, isGone, statusCode } from './errors.js';
import { type IndexFunction, InformerStore, type InformerHandlers } from './informer-store.js';
import type { ListPage, ListWatch, Selectors, WatchEventType, WatchHandle, WatchOptions } from './list-watch.js';
import { selectorMatches } from '../api/label-selector.js';
import type { LabelSelector } from '../api/k8s-schemas.js';
import { parseLabelSelector } from './label-selector.js';
import type { RuntimeMetrics } from './metrics.js';

export { objectKey, type IndexFunction, type InformerHandlers } from './informer-store.js';
export type {
  ListOptions,
  ListPage,
  ListWatch,
  Selectors,
  WatchEventType,
  WatchHandle,
  WatchOptions,
} from './list-watch.js';

export interface InformerOptions<T> extends Selectors {
  /** Names the informer in logs and metrics, e.g. `nodes` or `jobs`. */
  resource: string;
  /** Full relist interval (0: never). Default 10 min. */
  resyncMs?: number;
  /** Page size of lists. Default 500. */
  pageSize?: number;
  /** Restart delays after errors: doubling from initialMs up to maxMs. Default 1 s → 30 s. */
  backoff?: { initialMs: number; maxMs: number };
  /**
   * Applied to every object before it is cached. Default: drop metadata.managedFields (memory).
   * Either way the object's strings are then interned (string-interner.ts).
   */
  transform?: (object: T) => T;
  logger: Logger;
  metrics?: RuntimeMetrics;
  clock?: Clock;
}

/** How the next cycle starts: list (first time, 410, resync) or watch from the last resourceVersion. */
type Resume = 'list' | 'resync' | 'watch';

export class Informer<T extends KubernetesObject> {
  readonly resource: string;
  private readonly source: ListWatch<T>;
  private readonly options: InformerOptions<T>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly store: InformerStore<T>;
  private readonly syncWaiters: (() => void)[] = [];
  private resourceVersion = '';
  private isSynced = false;
  private running = false;
  /** Bumped on every (re)start and stop; callbacks of an older cycle are ignored. */
  private generation = 0;
  private watchHandle: WatchHandle | undefined;
  private restartTimer: TimerHandle | undefined;
  private resyncTimer: TimerHandle | undefined;
  private failures = 0;
  private watchStartedAt = 0;
  /** Events the current watch delivered: a short watch that delivered some made progress (see restart). */
  private watchEvents = 0;
  private restartCount = 0;
  /** The label selector as applyOwnWrite checks it (read once); undefined: one it cannot check. */
  private readonly ownWriteSelector: LabelSelector | undefined;

  constructor(source: ListWatch<T>, options: InformerOptions<T>) {
    this.source = source;
    this.options = options;
    this.resource = options.resource;
    this.clock = options.clock ?? systemClock;
    this.log = options.logger.child({ informer: options.resource });
    this.store = new InformerStore(this.log, options.transform);
    this.ownWriteSelector = parseLabelSelector(options.labelSelector ?? '');
  }

  /** True once a list succeeded: the cache then reflects the cluster (as of that list). */
  get synced(): boolean {
    return this.isSynced;
  }

  /** Restarts after errors so far. */
  get restarts(): number {
    return this.restartCount;
  }

  /** The newest resourceVersion the cache reflects (last list, event or bookmark): read-your-writes' clock. */
  get lastSyncResourceVersion(): string {
    return this.resourceVersion;
  }

  /** Adds handlers; objects already cached are replayed to them as adds (as client-go does). */
  on(handlers: InformerHandlers<T>): void {
    this.store.on(handlers);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.store.get(name, namespace);
  }

  /** Cached objects, optionally only those of one namespace. */
  list(namespace?: string): T[] {
    return this.store.list(namespace);
  }

  /**
   * Stores the object this process's write got back, now rather than when its watch event arrives
   * (informer-store.ts, "Own writes"), so the controllers reading this cache see the write at once.
   * An object outside this informer's selectors is left out (its watch would never remove it).
   * Returns whether it was stored.
   */
  applyOwnWrite(object: T): boolean {
    if (this.options.fieldSelector) return false;
    if (this.ownWriteSelector === undefined || !selectorMatches(this.ownWriteSelector, object.metadata?.labels ?? {}))
      return false;
    return this.store.applyOwnWrite(object);
  }

  /** Files every cached object under the values `keys` gives it (informer-store.ts); one name, one function. */
  addIndex(name: string, keys: IndexFunction<T>): void {
    this.store.addIndex(name, keys);
  }

  /** The cached objects filed under `value` in the index `name`. */
  byIndex(name: string, value: string): T[] {
    return this.store.byIndex(name, value);
  }

  /** Starts listing and watching in the background; see waitForSync. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.options.metrics?.informerSynced(this.resource, false);
    void this.cycle(++this.generation, 'list');
  }

  /** Resolves once synced; rejects after `timeoutMs` saying what is missing. */
  waitForSync(timeoutMs: number): Promise<void> {
    if (this.isSynced) return Promise.resolve();
    return new Promise((resolveSync, reject) => {
      const timer = this.clock.setTimeout(
        () =>
          reject(
            new Error(
              `informer ${this.resource} not synced after ${timeoutMs} ms (${this.restartCount} restarts); check the API server and RBAC for list/watch`,
            ),
          ),
        timeoutMs,
      );
      this.syncWaiters.push(() => {
        this.clock.clearTimeout(timer);
        resolveSync();
      });
    });
  }

  stop(): Promise<void> {
    this.running = false;
    this.generation++;
    this.clearTimers();
    this.watchHandle?.abort();
    this.watchHandle = undefined;
    this.isSynced = false;
    this.options.metrics?.informerSynced(this.resource, false);
    return Promise.resolve();
  }

  private selectors(): Selectors {
    const { labelSelector, fieldSelector } = this.options;
    return { ...(labelSelector ? { labelSelector } : {}), ...(fieldSelector ? { fieldSelector } : {}) };
  }

  private async cycle(gen: number, resume: Resume): Promise<void> {
    if (resume !== 'watch') {
      try {
        const resourceVersion = await this.listInto(gen, resume === 'resync');
        if (resourceVersion === undefined) return;
        this.resourceVersion = resourceVersion;
        this.failures = 0;
        this.markSynced();
        this.scheduleResync();
      } catch (e) {
        if (gen === this.generation) this.restart(gen, 'list', e);
        return;
      }
    }
    this.watch(gen);
  }

  /**
   * Lists page by page into the store (each page applied as it comes: a whole raw list beside the
   * cache was the operator's largest allocation), then drops what the list did not have. Resolves
   * with the list's resourceVersion, or undefined when the informer was stopped or restarted
   * meanwhile (the pages applied so far are as new as any watch event, so they stay).
   */
  private async listInto(gen: number, resync: boolean): Promise<string | undefined> {
    const seen = new Set<string>();
    let page: ListPage<T> | undefined;
    let token: string | undefined;
    do {
      page = await this.source.list({
        ...this.selectors(),
        limit: this.options.pageSize ?? 500,
        ...(token ? { continue: token } : {}),
      });
      if (gen !== this.generation) return undefined;
      this.store.applyListPage(page.items, resync, seen);
      token = page.metadata?.continue || undefined;
    } while (token);
    const listVersion = page.metadata?.resourceVersion ?? '';
    this.store.dropUnlisted(seen, listVersion);
    return listVersion;
  }

  private watch(gen: number): void {
    this.watchStartedAt = this.clock.now();
    this.watchEvents = 0;
    const options: WatchOptions = {
      ...this.selectors(),
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
    };
    const onEvent = (type: WatchEventType, object: unknown): void => {
      if (gen !== this.generation) return;
      if (type === 'ERROR') {
        // A Status object: 410 means our resourceVersion is too old to resume from.
        this.restart(gen, isGone(object) ? 'list' : 'watch', object);
        return;
      }
      this.failures = 0;
      this.watchEvents++;
      const rv = (object as T).metadata?.resourceVersion;
      if (rv) this.resourceVersion = rv;
      // A bookmark only moves the resourceVersion on.
      if (type !== 'BOOKMARK') this.store.apply(type, object as T);
    };
    const onEnd = (err: unknown): void => {
      if (gen !== this.generation) return;
      this.restart(gen, isGone(err) ? 'list' : 'watch', err);
    };
    this.source.watch(options, onEvent, onEnd).then(
      (handle) => {
        if (gen === this.generation) this.watchHandle = handle;
        else handle.abort();
      },
      (err: unknown) => onEnd(err ?? new Error('watch could not start')),
    );
  }

  /**
   * Ends the current cycle and starts another. A watch that simply ended after a while (server
   * timeout, the client's 30 s inactivity timeout) or after delivering events resumes at once, and
   * 410 lists at once; other errors, and watches that end as soon as they start without an event,
   * wait 1 s, 2 s, 4 s … up to the cap. client-go's reflector draws the same line ("very short
   * watch": under a second and no items). A loaded API server closes a watch whose reader falls
   * behind in a burst ("Forcing … watcher close due to unresponsiveness"), often within a second of
   * its start; that watch made progress, and waiting a second would leave the cache a second behind
   * in exactly the burst.
   */
  private restart(gen: number, resume: Resume, err: unknown): void {
    if (gen !== this.generation || !this.running) return;
    const next = ++this.generation;
    this.watchHandle?.abort();
    this.watchHandle = undefined;
    const quietEnd = err === null || err === undefined || (err instanceof Error && err.name === 'TimeoutError');
    let delayMs = 0;
    if (quietEnd && (this.watchEvents > 0 || this.clock.now() - this.watchStartedAt >= 1000)) {
      this.log.debug({ resume, events: this.watchEvents }, 'watch ended; resuming');
    } else {
      const { initialMs, maxMs } = this.options.backoff ?? { initialMs: 1000, maxMs: 30_000 };
      delayMs = isGone(err) ? 0 : Math.min(initialMs * 2 ** this.failures, maxMs);
      this.failures++;
      this.restartCount++;
      this.options.metrics?.informerRestarted(this.resource);
      this.log.warn(
        { err: quietEnd ? 'watch ended at once' : errorMessage(err), code: statusCode(err), resume, delayMs },
        'watch failed; restarting',
      );
    }
    this.restartTimer = this.clock.setTimeout(() => {
      this.restartTimer = undefined;
      if (next === this.generation) void this.cycle(next, resume);
    }, delayMs);
  }

  /** Arms the next full relist `resyncMs` after a successful list; restarts of the watch leave it alone. */
  private scheduleResync(): void {
    const resyncMs = this.options.resyncMs ?? 600_000;
    if (this.resyncTimer !== undefined) this.clock.clearTimeout(this.resyncTimer);
    this.resyncTimer = undefined;
    if (resyncMs <= 0) return;
    this.resyncTimer = this.clock.setTimeout(() => {
      this.resyncTimer = undefined;
      if (!this.running) return;
      if (this.restartTimer !== undefined) this.clock.clearTimeout(this.restartTimer);
      this.restartTimer = undefined;
      const next = ++this.generation;
      this.watchHandle?.abort();
      this.watchHandle = undefined;
      void this.cycle(next, 'resync');
    }, resyncMs);
  }

  private markSynced(): void {
    if (this.isSynced) return;
    this.isSynced = true;
    this.options.metrics?.informerSynced(this.resource, true);
    this.log.debug({ objects: this.store.size }, 'synced');
    for (const wake of this.syncWaiters.splice(0)) wake();
  }

  private clearTimers(): void {
    for (const timer of [this.restartTimer, this.resyncTimer]) if (timer !== undefined) this.clock.clearTimeout(timer);
    this.restartTimer = this.resyncTimer = undefined;
  }
}
