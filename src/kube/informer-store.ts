/**
 * The informer's cache and its handlers (client-go's thread-safe store and the shared informer's
 * handler list): objects by key, each transformed and its strings interned on the way in, and every
 * change fired to the handlers. informer.ts, the reflector, feeds it from lists and watch events and
 * decides when to list again; this part never talks to the API server.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { errorMessage } from './errors.js';
import { StringInterner } from './string-interner.js';

export interface InformerHandlers<T> {
  add?: (object: T) => void;
  /** Also fired with old === current on each resync. */
  update?: (object: T, old: T) => void;
  delete?: (object: T) => void;
}

/** The cache key of an object: `namespace/name`, or `name` when cluster-scoped. */
export function objectKey(object: KubernetesObject): string {
  const { name = '', namespace } = object.metadata ?? {};
  return namespace ? `${namespace}/${name}` : name;
}

/** Shared by every informer of the process: the same strings recur across kinds (node names in pods, Jobs and NodeOps). */
const cachedStrings = new StringInterner();

function dropManagedFields<T extends KubernetesObject>(object: T): T {
  if (object.metadata?.managedFields) delete object.metadata.managedFields;
  return object;
}

export class InformerStore<T extends KubernetesObject> {
  private readonly cache = new Map<string, T>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private readonly transform: (object: T) => T;

  private readonly log: Logger;
  /** `transform` defaults to dropping metadata.managedFields; the strings are interned either way. */
  constructor(log: Logger, transform: ((object: T) => T) | undefined) {
    this.log = log;
    const shape = transform ?? dropManagedFields;
    this.transform = (object) => cachedStrings.internAll(shape(object));
  }

  get size(): number {
    return this.cache.size;
  }

  /** Adds handlers; objects already cached are replayed to them as adds (as client-go does). */
  on(handlers: InformerHandlers<T>): void {
    this.handlers.push(handlers);
    for (const object of this.cache.values()) handlers.add?.(object);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.cache.get(namespace ? `${namespace}/${name}` : name);
  }

  /** Cached objects, optionally only those of one namespace. */
  list(namespace?: string): T[] {
    const all = [...this.cache.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata?.namespace === namespace);
  }

  /** One watch event (`ADDED`, `MODIFIED`, `DELETED`; others are ignored) applied and fired. */
  apply(type: string, object: T): void {
    const rv = object.metadata?.resourceVersion;
    const key = objectKey(object);
    const old = this.cache.get(key);
    if (type === 'DELETED') {
      this.cache.delete(key);
      this.emit('delete', this.transform(object));
      return;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED') return;
    const current = this.transform(object);
    this.cache.set(key, current);
    if (!old) this.emit('add', current);
    else if (old.metadata?.resourceVersion !== rv) this.emit('update', current, old);
  }

  /** Swaps the cache for a fresh list, firing the differences (and update for all on resync). */
  replace(items: T[], resync: boolean): void {
    const seen = new Set<string>();
    for (const item of items) {
      const current = this.transform(item);
      const key = objectKey(current);
      seen.add(key);
      const old = this.cache.get(key);
      this.cache.set(key, current);
      if (!old) this.emit('add', current);
      else if (resync || old.metadata?.resourceVersion !== current.metadata?.resourceVersion)
        this.emit('update', current, old);
    }
    for (const [key, old] of this.cache) {
      if (seen.has(key)) continue;
      this.cache.delete(key);
      this.emit('delete', old);
    }
  }

  private emit(event: 'add' | 'delete', object: T): void;
  private emit(event: 'update', object: T, old: T): void;
  private emit(event: keyof InformerHandlers<T>, object: T, old?: T): void {
    for (const handlers of this.handlers) {
      try {
        if (event === 'update') handlers.update?.(object, old ?? object);
        else handlers[event]?.(object);
      } catch (e) {
        // Handlers should only enqueue; one that throws must not break the cache for the others.
        this.log.error({ event, key: objectKey(object), err: errorMessage(e) }, 'informer handler threw');
      }
    }
  }
}
