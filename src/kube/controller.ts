/**
 * A controller: informer events mapped to keys, one keyed queue, N workers calling reconcile(key).
 * Level-triggered, as controller-runtime: events only say "look at this key again"; reconcile reads
 * the caches and the cluster, acts, and returns "done" or "requeue after". Mapping functions turn a
 * child's event into its owner's key (Job → NodeOp via ownerReferences).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import { objectKey, type Informer } from './informer.js';
import type { RuntimeMetrics } from './metrics.js';
import { runWorkers, WorkQueue, type Reconcile } from './queue.js';

/** Maps an object to the keys to reconcile (empty: ignore the event). */
export type KeyMapper<T> = (object: T) => string[];

/**
 * Keys per kind of event, for a watch whose update must be judged by what changed (as
 * controller-runtime's handler.Funcs with an update predicate): an update maps to no key when the
 * change is one the reconcile does not read.
 */
export interface EventKeys<T> {
  add: KeyMapper<T>;
  update: (object: T, old: T) => string[];
  delete: KeyMapper<T>;
}

export interface ControllerOptions {
  name: string;
  reconcile: Reconcile;
  /** Concurrent reconciles (of different keys). Default 1. */
  workers?: number;
  logger: Logger;
  metrics?: RuntimeMetrics;
  clock?: Clock;
  /** See WorkerOptions.successCancelsRequeue (default false: client-go's timers stay). */
  successCancelsRequeue?: boolean;
  /** Per-key retry backoff; defaults as client-go (5 ms doubling to 1000 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly options: ControllerOptions;
  private workersDone: Promise<void> | undefined;

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.options = options;
    this.queue = new WorkQueue({
      name: options.name,
      ...(options.baseDelayMs !== undefined ? { baseDelayMs: options.baseDelayMs } : {}),
      ...(options.maxDelayMs !== undefined ? { maxDelayMs: options.maxDelayMs } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
  }

  /**
   * Enqueues the keys `keys` maps each event of `informer` to (default: the object's own key).
   * With a KeyMapper, an update maps both the old and the new object, so a child that moved to
   * another owner (a label changed) wakes both; EventKeys decide per kind of event.
   */
  watch<T extends KubernetesObject>(informer: Informer<T>, keys: KeyMapper<T> | EventKeys<T> = ownKey): this {
    const events = typeof keys === 'function' ? oldAndNew(keys) : keys;
    // Each key once per event: an update maps the old and the new object, usually to the same key,
    // and a second add of a key a worker has just taken marks it dirty, which is a second reconcile.
    const enqueue = (mapped: string[]): void => {
      for (const key of mapped.length > 1 ? new Set(mapped) : mapped) this.queue.add(key);
    };
    informer.on({
      add: (o) => enqueue(events.add(o)),
      update: (o, old) => enqueue(events.update(o, old)),
      delete: (o) => enqueue(events.delete(o)),
    });
    return this;
  }

  /** Starts the workers (returns at once). */
  start(): void {
    if (this.workersDone) return;
    const log = this.options.logger.child({ controller: this.name });
    this.workersDone = runWorkers(this.queue, this.options.workers ?? 1, this.options.reconcile, {
      logger: log,
      ...(this.options.metrics ? { metrics: this.options.metrics } : {}),
      ...(this.options.clock ? { clock: this.options.clock } : {}),
      ...(this.options.successCancelsRequeue ? { successCancelsRequeue: true } : {}),
    });
    log.info({ workers: this.options.workers ?? 1 }, 'controller started');
  }

  /**
   * Shuts the queue down at once (no new reconciles start), then waits up to `deadlineMs` for the
   * reconciles in flight. Resolves false if some were still running at the deadline.
   */
  async stop(deadlineMs: number): Promise<boolean> {
    this.queue.shutdown();
    return this.queue.drain(deadlineMs);
  }
}

/** A KeyMapper for every event; an update maps the new object, then the old one. */
function oldAndNew<T>(keys: KeyMapper<T>): EventKeys<T> {
  return { add: keys, update: (object, old) => [...keys(object), ...keys(old)], delete: keys };
}

/** The object's own key: `namespace/name` or `name`. */
export function ownKey(object: KubernetesObject): string[] {
  return [objectKey(object)];
}

/**
 * Keys of the object's owners of `kind` (optionally also matching `apiVersion`'s group). A
 * namespaced owner lives in its child's namespace; pass `ownerNamespaced: false` for cluster-scoped
 * owners (their key is the bare name).
 */
export function ownerKeys(
  kind: string,
  options: { apiGroup?: string; ownerNamespaced?: boolean } = {},
): KeyMapper<KubernetesObject> {
  const namespaced = options.ownerNamespaced ?? true;
  return (object) => {
    const namespace = object.metadata?.namespace;
    return (object.metadata?.ownerReferences ?? [])
      .filter(
        (ref) => ref.kind === kind && (options.apiGroup === undefined || groupOf(ref.apiVersion) === options.apiGroup),
      )
      .map((ref) => (namespaced && namespace ? `${namespace}/${ref.name}` : ref.name));
  };
}

/** `apps/v1` → `apps`; `v1` (the core group) → ''. */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** Splits a key made by objectKey back into name and namespace. */
export function parseKey(key: string): { name: string; namespace?: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
