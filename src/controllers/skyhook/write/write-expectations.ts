/**
 * Read-your-writes over informer caches. The planner decides from the caches; if it planned from a
 * cache that has not yet seen this process's last write (a node's state, a NodeOp suspended or created,
 * a NodeOp deleted), it could undo that write, e.g. run a completed stage again, or count a node it
 * admitted itself as free and admit another past the budget. So every write notes the resourceVersion
 * it produced, and a reconcile waits until the caches have caught up; the watch event that catches
 * them up enqueues the reconcile again.
 *
 * Met is exact, never timed: the cache shows the object at or past the written resourceVersion, or the
 * object is absent and its informer has itself seen a resourceVersion at or past the written one (its
 * `lastSyncResourceVersion`: the cache reflects a moment after our write, so the object was deleted
 * since). A timed expectation once let a 5000-node rollout exceed its budget: its watches ran more
 * than 30 s late, the expectations were dropped, and a pass planned from a cache without the nodes
 * the previous pass had admitted. Only a broken watch (no event and no bookmark for minutes) can hold
 * an expectation that long; after SAFETY_NET_MS it is dropped loudly (`onExpired`: a warning and
 * `skyhook_write_expectations_expired_total`), so a dead watch cannot stall the operator unseen.
 *
 * Each SCR waits for its own writes only (`scoped`): an SCR's plan reads other SCRs' state on a node
 * only to hold itself back (priority order), so a cache behind another SCR's write makes it wait,
 * never undo anything; and node writes touch only the writer's own keys (node-writes.ts) or read the
 * node fresh (cordons, taints). With one shared wait, five SCRs rolling out together starved each
 * other: there was rarely a moment with no write of any of them in flight.
 *
 * The wait is usually none: each written object goes into its cache as the API server returned it
 * (`onWrote`, the informers' write-through), so only deletions, and writes whose versions cannot be
 * ordered, wait for a watch event. At 1000 nodes three reconciles in four used to find the caches
 * behind and wait for their own writes' events.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { nameOf } from '../../../api/object-meta.js';
import { reflectsWrite } from '../../../kube/resource-version.js';

/** A deletion needs no version: it is met once the cache no longer shows the object live. */
type Expectation = { kind: 'version'; resourceVersion: string } | { kind: 'gone' };

/** Against a broken watch only: an exact expectation normally is met within a second, even under load. */
export const SAFETY_NET_MS = 5 * 60_000;

/** Where a cached object is looked up: `cache(kind)(name)`. */
export type CacheLookup = (kind: string, name: string) => KubernetesObject | undefined;

/** The newest resourceVersion the informer caching `kind` reflects (Informer.lastSyncResourceVersion). */
export type SyncedVersionLookup = (kind: string) => string | undefined;

/** An expectation the safety net dropped: what was written, by which SCR, how long ago. */
export interface ExpiredExpectation {
  owner: string;
  kind: string;
  name: string;
  ageMs: number;
}

interface Pending {
  owner: string;
  kind: string;
  name: string;
  expect: Expectation;
  at: number;
}

/**
 * What every scope of one controller shares: each owner's expectations by `<kind>/<name>`, oldest
 * first, and a count per object. Kept per owner because an owner's check runs on every node event
 * (skyhook-controller.ts asks whether an SCR is still behind before waking it): one map for all
 * owners made each check walk every SCR's writes, thousands at 1000 nodes x 5 SCRs.
 */
interface Store {
  pending: Map<string, Map<string, Pending>>;
  /** How many owners await each `<kind>/<name>` (for `awaits`, asked on every watch event). */
  awaited: Map<string, number>;
  onExpired: (expired: ExpiredExpectation) => void;
  onWrote: (kind: string, object: KubernetesObject) => void;
}

export interface WriteExpectationsOptions {
  /** Told of every expectation the safety net drops (the controller logs a warning and counts it). */
  onExpired?: (expired: ExpiredExpectation) => void;
  /**
   * Told of every write once it is noted: the controller stores the result in its cache at once
   * (Informer.applyOwnWrite), which usually meets the expectation before the next reconcile asks.
   */
  onWrote?: (kind: string, object: KubernetesObject) => void;
}

export class WriteExpectations {
  private readonly store: Store;
  /** The SCR whose writes this view notes and waits for; '' (the root) waits for every owner's. */
  private readonly owner: string;
  private readonly now: () => number = Date.now;

  constructor(now: () => number = Date.now, owner = '', store?: Store, options: WriteExpectationsOptions = {}) {
    this.now = now;
    this.owner = owner;
    this.store = store ?? {
      pending: new Map(),
      awaited: new Map(),
      onExpired: options.onExpired ?? (() => {}),
      onWrote: options.onWrote ?? (() => {}),
    };
  }

  /** The view one SCR's reconcile writes through: it notes writes as that SCR's and waits for those only. */
  scoped(owner: string): WriteExpectations {
    return new WriteExpectations(this.now, owner, this.store);
  }

  /** `object` as the API server returned it from a write. */
  wrote(kind: string, object: KubernetesObject): void {
    const name = nameOf(object);
    const resourceVersion = object.metadata?.resourceVersion;
    if (!resourceVersion) return;
    this.note(kind, name, { kind: 'version', resourceVersion });
    this.store.onWrote(kind, object);
  }

  deleted(kind: string, name: string): void {
    this.note(kind, name, { kind: 'gone' });
  }

  /** True while a write to this object, by any owner, waits to be seen (its next event matters, whatever changed). */
  awaits(kind: string, name: string): boolean {
    return (this.store.awaited.get(`${kind}/${name}`) ?? 0) > 0;
  }

  private note(kind: string, name: string, expect: Expectation): void {
    const object = `${kind}/${name}`;
    const own = this.store.pending.get(this.owner) ?? new Map<string, Pending>();
    this.store.pending.set(this.owner, own);
    if (!own.has(object)) this.count(object, 1);
    // A newer write of the same object replaces the expectation (and moves it to the back: newest).
    own.delete(object);
    own.set(object, { owner: this.owner, kind, name, expect, at: this.now() });
  }

  private forget(own: Map<string, Pending>, object: string, entry: Pending): void {
    own.delete(object);
    if (own.size === 0) this.store.pending.delete(entry.owner);
    this.count(object, -1);
  }

  /** The expectation maps this view waits for: its owner's, or (the root) every owner's. */
  private scopes(): Map<string, Pending>[] {
    if (this.owner !== '') {
      const own = this.store.pending.get(this.owner);
      return own ? [own] : [];
    }
    return [...this.store.pending.values()];
  }

  /** Whether the caches reflect `entry` (then it is forgotten, as is one the safety net drops). */
  private settled(
    own: Map<string, Pending>,
    object: string,
    entry: Pending,
    lookup: CacheLookup,
    synced: SyncedVersionLookup,
  ): boolean {
    const { kind, name, expect } = entry;
    if (seen(expect, lookup(kind, name), synced(kind))) {
      this.forget(own, object, entry);
      return true;
    }
    const ageMs = this.now() - entry.at;
    if (ageMs <= SAFETY_NET_MS) return false;
    this.forget(own, object, entry);
    this.store.onExpired({ owner: entry.owner, kind, name, ageMs });
    return true;
  }

  private count(object: string, delta: number): void {
    const next = (this.store.awaited.get(object) ?? 0) + delta;
    if (next > 0) this.store.awaited.set(object, next);
    else this.store.awaited.delete(object);
  }

  /**
   * Objects the caches have not caught up with, of this view's owner (the root: of all); met ones are
   * forgotten. `synced` tells how far each kind's informer has got (unknown: a written object missing
   * from the cache stays unmet until it appears or the safety net drops it).
   */
  unmet(lookup: CacheLookup, synced: SyncedVersionLookup = () => undefined): string[] {
    const behind: string[] = [];
    for (const own of this.scopes())
      for (const [object, entry] of own) if (!this.settled(own, object, entry, lookup, synced)) behind.push(object);
    return behind;
  }

  /**
   * `unmet(...).length > 0`, stopping at the first write the caches still miss: the oldest writes are
   * looked at first and forgotten once seen, so checking on every watch event costs about one lookup.
   */
  behind(lookup: CacheLookup, synced: SyncedVersionLookup = () => undefined): boolean {
    for (const own of this.scopes())
      for (const [object, entry] of own) if (!this.settled(own, object, entry, lookup, synced)) return true;
    return false;
  }
}

/** True when a cache showing `cached`, its informer at `syncedVersion`, reflects the write `expect`. */
function seen(expect: Expectation, cached: KubernetesObject | undefined, syncedVersion: string | undefined): boolean {
  if (expect.kind === 'gone') return cached === undefined || cached.metadata?.deletionTimestamp !== undefined;
  return reflectsWrite(cached, syncedVersion, expect.resourceVersion);
}
