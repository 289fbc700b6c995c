/**
 * The informer's cache and its handlers (client-go's thread-safe store and the shared informer's
 * handler list): objects by key, each transformed and its strings interned on the way in, and every
 * change fired to the handlers. informer.ts, the reflector, feeds it from lists and watch events and
 * decides when to list again; this part never talks to the API server.
 *
 * Indexes (client-go's Indexers): a named function gives each object the values it is filed under
 * (its node, its owner SCR, an annotation key it carries), and `byIndex` answers "the objects filed
 * under v" from a map kept current on every add, update and delete, instead of a scan of the whole
 * cache on every reconcile (at 1000 nodes and their pods, ConfigMaps and NodeOps, those scans add up).
 *
 * Own writes (write-through, like client-go's MutationCache): the object the API server returned from
 * this process's write is stored at once (`applyOwnWrite`) instead of when its watch event arrives,
 * often hundreds of milliseconds later on a busy API server, while the controllers waited for it
 * (read-your-writes). The store then never goes back: a watch event or listed object older than the
 * one cached (by resourceVersion) is one the write already superseded and is skipped; its own event
 * (the same version) changes nothing. Versions that are not integers are never written through.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { errorMessage } from './errors.js';
import { isAtLeast, isNewer, isOrderedVersion } from './resource-version.js';
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

/** The values an object is filed under in one index (none: not in it). */
export type IndexFunction<T> = (object: T) => readonly string[];

interface Index<T> {
  keys: IndexFunction<T>;
  /** value → object key → object. */
  entries: Map<string, Map<string, T>>;
}

export class InformerStore<T extends KubernetesObject> {
  private readonly cache = new Map<string, T>();
  private readonly indexes = new Map<string, Index<T>>();
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

  /**
   * Adds the index `name` (objects already cached are filed at once). A name means one function in
   * the whole process: informers are shared between controllers, so a second add of the same name
   * keeps the first.
   */
  addIndex(name: string, keys: IndexFunction<T>): void {
    if (this.indexes.has(name)) return;
    const index: Index<T> = { keys, entries: new Map() };
    this.indexes.set(name, index);
    for (const [key, object] of this.cache) file(index, key, object);
  }

  /** The cached objects filed under `value` in the index `name` (which must have been added). */
  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index '${name}' on this informer`);
    const filed = index.entries.get(value);
    return filed ? [...filed.values()] : [];
  }

  /** Stores `object` under `key`, refiling it in every index. */
  private put(key: string, object: T, old: T | undefined): void {
    this.cache.set(key, object);
    for (const index of this.indexes.values()) {
      if (old) unfile(index, key, old);
      file(index, key, object);
    }
  }

  private remove(key: string, old: T | undefined): void {
    this.cache.delete(key);
    if (old) for (const index of this.indexes.values()) unfile(index, key, old);
  }

  /** Cached objects, optionally only those of one namespace. */
  list(namespace?: string): T[] {
    const all = [...this.cache.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata?.namespace === namespace);
  }

  /**
   * The object this process's write got back from the API server, stored and fired now unless the
   * cache already holds it or a later version. Returns whether it was stored.
   */
  applyOwnWrite(object: T): boolean {
    const rv = object.metadata?.resourceVersion;
    if (!isOrderedVersion(rv)) return false;
    const key = objectKey(object);
    const old = this.cache.get(key);
    if (old && isAtLeast(old.metadata?.resourceVersion, rv)) return false;
    // A copy: the transform trims in place, and the caller still reads the write's result.
    const current = this.transform(structuredClone(object));
    this.put(key, current, old);
    if (!old) this.emit('add', current);
    else this.emit('update', current, old);
    return true;
  }

  /** One watch event (`ADDED`, `MODIFIED`, `DELETED`; others are ignored) applied and fired. */
  apply(type: string, object: T): void {
    const rv = object.metadata?.resourceVersion;
    const key = objectKey(object);
    const old = this.cache.get(key);
    // Older than an own write already stored: superseded (a deletion too: the cached one was written after it).
    if (old && isNewer(old.metadata?.resourceVersion, rv)) return;
    if (type === 'DELETED') {
      this.remove(key, old);
      this.emit('delete', this.transform(object));
      return;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED') return;
    // The version already stored (the echo of an own write, mostly): one resourceVersion is one
    // state of the object, so there is nothing to transform, refile or fire again.
    if (old && old.metadata?.resourceVersion === rv) return;
    const current = this.transform(object);
    this.put(key, current, old);
    if (!old) this.emit('add', current);
    else this.emit('update', current, old);
  }

  /**
   * One page of a list, applied as it arrives (its keys added to `seen`), so a list of thousands of
   * objects is never held whole and untransformed beside the cache: at 5000 nodes the ten-minute
   * relists of every informer at once, each accumulated raw, took the operator past its heap limit.
   */
  applyListPage(items: T[], resync: boolean, seen: Set<string>): void {
    for (const item of items) {
      const key = objectKey(item);
      seen.add(key);
      const old = this.cache.get(key);
      if (old && isNewer(old.metadata?.resourceVersion, item.metadata?.resourceVersion)) continue;
      const current = this.transform(item);
      this.put(key, current, old);
      if (!old) this.emit('add', current);
      else if (resync || old.metadata?.resourceVersion !== current.metadata?.resourceVersion)
        this.emit('update', current, old);
    }
  }

  /**
   * After the last page of a list: what it did not list is gone, except an own write newer than the
   * list (`listVersion`, the list's resourceVersion): created after the list was read.
   */
  dropUnlisted(seen: Set<string>, listVersion?: string): void {
    for (const [key, old] of this.cache) {
      if (seen.has(key) || isNewer(old.metadata?.resourceVersion, listVersion)) continue;
      this.remove(key, old);
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

function file<T>(index: Index<T>, key: string, object: T): void {
  for (const value of index.keys(object)) {
    const filed = index.entries.get(value) ?? new Map<string, T>();
    filed.set(key, object);
    index.entries.set(value, filed);
  }
}

function unfile<T>(index: Index<T>, key: string, object: T): void {
  for (const value of index.keys(object)) {
    const filed = index.entries.get(value);
    if (!filed) continue;
    filed.delete(key);
    if (filed.size === 0) index.entries.delete(value);
  }
}
