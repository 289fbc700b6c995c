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
