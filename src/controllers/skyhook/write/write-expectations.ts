/**
 * Read-your-writes over informer caches. The planner decides from the caches; if it planned from a
 * cache that has not yet seen this process's last write (a node's state, a NodeOp suspended or created,
 * a NodeOp deleted), it could undo that write, e.g. run a completed stage again. So every write
 * notes the resourceVersion it produced, and a reconcile waits until the caches have caught up;
 * the watch event that catches them up enqueues the reconcile again.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { nameOf } from '../../../api/object-meta.js';

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

export class WriteExpectations {
  private readonly pending = new Map<string, { kind: string; name: string; expect: Expectation; at: number }>();

  private readonly now: () => number = Date.now;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** `object` as the API server returned it from a write. */
  wrote(kind: string, object: KubernetesObject): void {
    const name = nameOf(object);
    const resourceVersion = object.metadata?.resourceVersion;
    if (resourceVersion)
      this.pending.set(`${kind}/${name}`, { kind, name, expect: { kind: 'version', resourceVersion }, at: this.now() });
  }

  deleted(kind: string, name: string): void {
    this.pending.set(`${kind}/${name}`, { kind, name, expect: { kind: 'gone' }, at: this.now() });
  }

  /** True while a write to this object waits to be seen (its next event matters, whatever changed). */
  awaits(kind: string, name: string): boolean {
    return this.pending.has(`${kind}/${name}`);
  }

  /** Objects the caches have not caught up with (met expectations are forgotten). */
  unmet(lookup: CacheLookup): string[] {
    const behind: string[] = [];
    for (const [id, { kind, name, expect, at }] of this.pending) {
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
      if (met) this.pending.delete(id);
      else behind.push(id);
    }
    return behind;
  }
}

/**
 * resourceVersions are opaque, but etcd's are increasing integers and every API server in use
 * serves those; anything else only counts once it is the same version.
 */
function isAtLeast(cached: string | undefined, wanted: string): boolean {
  if (cached === undefined) return false;
  if (/^\d+$/.test(cached) && /^\d+$/.test(wanted)) return BigInt(cached) >= BigInt(wanted);
  return cached === wanted;
}
