/**
 * Read-your-writes over informer caches. The planner decides from the caches; if it planned from a
 * cache that has not yet seen this process's last write (a node's state, a NodeOp suspended or created,
 * a NodeOp deleted), it could undo that write, e.g. run a completed stage again. So every write
 * notes the resourceVersion it produced, and a reconcile waits until the caches have caught up;
 * the watch event that catches them up enqueues the reconcile again.
 *
 * Each SCR waits for its own writes only (`scoped`): an SCR's plan reads other SCRs' state on a node
 * only to hold itself back (priority order), so a cache behind another SCR's write makes it wait,
 * never undo anything; and node writes touch only the writer's own keys (node-writes.ts) or read the
 * node fresh (cordons, taints). With one shared wait, five SCRs rolling out together starved each
 * other: there was rarely a moment with no write of any of them in flight.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { nameOf } from '../../../api/object-meta.js';
import { isAtLeast } from '../../../kube/resource-version.js';

type Expectation = { kind: 'version'; resourceVersion: string } | { kind: 'gone' };

/**
 * Kinds this process only ever updates, never creates (nodes, SCRs): one missing from the cache
 * after a write of ours was deleted since (a node removed, an SCR whose last finalizer went), and
 * waiting for the cache to show the written version would hold every reconcile back until the TTL.
 * A kind we create could also be missing because the cache has not seen the create yet.
 */
const NEVER_CREATED_HERE: ReadonlySet<string> = new Set(['Node', 'Skyhook']);

/** An expectation not met after this long is dropped (the object was deleted by someone else, say). */
const EXPECTATION_TTL_MS = 30_000;

/** Where a cached object is looked up: `cache(kind)(name)`. */
export type CacheLookup = (kind: string, name: string) => KubernetesObject | undefined;

interface Pending {
  owner: string;
  kind: string;
  name: string;
  expect: Expectation;
  at: number;
}

/** What every scope of one controller shares: the expectations by `<owner>|<kind>/<name>`, and a count per object. */
interface Store {
  pending: Map<string, Pending>;
  /** How many owners await each `<kind>/<name>` (for `awaits`, asked on every watch event). */
  awaited: Map<string, number>;
}

export class WriteExpectations {
  private readonly store: Store;
  /** The SCR whose writes this view notes and waits for; '' (the root) waits for every owner's. */
  private readonly owner: string;
  private readonly now: () => number = Date.now;

  constructor(now: () => number = Date.now, owner = '', store?: Store) {
    this.now = now;
    this.owner = owner;
    this.store = store ?? { pending: new Map(), awaited: new Map() };
  }

  /** The view one SCR's reconcile writes through: it notes writes as that SCR's and waits for those only. */
  scoped(owner: string): WriteExpectations {
    return new WriteExpectations(this.now, owner, this.store);
  }

  /** `object` as the API server returned it from a write. */
  wrote(kind: string, object: KubernetesObject): void {
    const name = nameOf(object);
    const resourceVersion = object.metadata?.resourceVersion;
    if (resourceVersion) this.note(kind, name, { kind: 'version', resourceVersion });
  }

  deleted(kind: string, name: string): void {
    this.note(kind, name, { kind: 'gone' });
  }

  /** True while a write to this object, by any owner, waits to be seen (its next event matters, whatever changed). */
  awaits(kind: string, name: string): boolean {
    return (this.store.awaited.get(`${kind}/${name}`) ?? 0) > 0;
  }

  private note(kind: string, name: string, expect: Expectation): void {
    const id = `${this.owner}|${kind}/${name}`;
    if (!this.store.pending.has(id)) this.count(`${kind}/${name}`, 1);
    this.store.pending.set(id, { owner: this.owner, kind, name, expect, at: this.now() });
  }

  private forget(id: string, entry: Pending): void {
    this.store.pending.delete(id);
    this.count(`${entry.kind}/${entry.name}`, -1);
  }

  private count(object: string, delta: number): void {
    const next = (this.store.awaited.get(object) ?? 0) + delta;
    if (next > 0) this.store.awaited.set(object, next);
    else this.store.awaited.delete(object);
  }

  /** Objects the caches have not caught up with, of this view's owner (the root: of all); met ones are forgotten. */
  unmet(lookup: CacheLookup): string[] {
    const behind: string[] = [];
    for (const [id, entry] of this.store.pending) {
      if (this.owner !== '' && entry.owner !== this.owner) continue;
      const { kind, name, expect, at } = entry;
      const cached = lookup(kind, name);
      // Expired counts as met whatever the cache shows: an expectation that outlives its TTL must
      // not hold every later reconcile of the process back.
      const expired = this.now() - at > EXPECTATION_TTL_MS;
      const met =
        expired ||
        (expect.kind === 'gone'
          ? cached === undefined || cached.metadata?.deletionTimestamp !== undefined
          : cached === undefined
            ? NEVER_CREATED_HERE.has(kind)
            : isAtLeast(cached.metadata?.resourceVersion, expect.resourceVersion));
      if (met) this.forget(id, entry);
      else behind.push(`${kind}/${name}`);
    }
    return behind;
  }
}
