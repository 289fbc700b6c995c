/**
 * Comparing resourceVersions, for read-your-writes over informer caches (the Skyhook and NodeOp
 * controllers both wait until their caches show their own last writes).
 */

/**
 * True when `cached` is `wanted` or later. resourceVersions are opaque, but etcd's are increasing
 * integers and every API server in use serves those; anything else only counts once it is the same version.
 */
export function isAtLeast(cached: string | undefined, wanted: string): boolean {
  if (cached === undefined) return false;
  if (/^\d+$/.test(cached) && /^\d+$/.test(wanted)) return BigInt(cached) >= BigInt(wanted);
  return cached === wanted;
}

/**
 * True when `a` is strictly later than `b`. Only integer versions are ordered; with anything else
 * neither is later (the caller then behaves as if versions were not comparable).
 */
export function isNewer(a: string | undefined, b: string | undefined): boolean {
  return isOrderedVersion(a) && isOrderedVersion(b) && BigInt(a) > BigInt(b);
}

/** True when `rv` can be ordered against other versions (an etcd revision). */
export function isOrderedVersion(rv: string | undefined): rv is string {
  return rv !== undefined && /^\d+$/.test(rv);
}

/**
 * True when a cache reflects a write of ours that produced `written`: it shows the object at that
 * version or later, or the object is absent (`cachedVersion` undefined) and the cache's informer has
 * itself got past the write (`syncedVersion`, its lastSyncResourceVersion): deleted since. An absent
 * object the informer has not got past may be one whose create the cache has not seen yet.
 */
export function reflectsWrite(
  cached: { metadata?: { resourceVersion?: string } } | undefined,
  syncedVersion: string | undefined,
  written: string,
): boolean {
  if (cached !== undefined) return isAtLeast(cached.metadata?.resourceVersion, written);
  return syncedVersion !== undefined && syncedVersion !== '' && isAtLeast(syncedVersion, written);
}
