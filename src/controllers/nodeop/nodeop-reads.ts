/**
 * Read-your-writes over the NodeOp cache. A reconcile used to GET its NodeOp from the API server,
 * because a cache that has not yet seen this process's last status write could show a node as not
 * started and start it (take its slot) twice. At 1000 nodes that was a GET per reconcile. Now each
 * status (or finalizer) write notes the resourceVersion it produced; a reconcile reads the cache
 * when the cache shows that version or a later one, and only while the cache lags behind our own
 * write does it GET (rare: the watch event of a write arrives within milliseconds). Others' writes
 * reach us as watch events like any change; the Job cache's busy nodes (pacing.ts) guard slots too.
 *
 * The same write's watch event is also how `isOwnStatusWrite` recognises an update that only
 * echoes our own status write, which wakes nobody (controller.ts).
 */
import type { NodeOp } from '../../api/nodeop.js';
import { parseKey } from '../../kube/controller.js';
import { objectKey, type Informer } from '../../kube/informer.js';
import { cachedNodeOp } from '../cached-objects.js';
import { isAtLeast } from '../../kube/resource-version.js';

/** A write not seen in the cache after this long is forgotten (the NodeOp was deleted meanwhile, say). */
const EXPECTATION_TTL_MS = 30_000;

export class NodeOpReads {
  private readonly written = new Map<string, { resourceVersion: string; at: number }>();
  private readonly cache: Pick<Informer<NodeOp>, 'get'>;
  private readonly fetch: (key: string) => Promise<NodeOp | undefined>;
  private readonly now: () => number;
  /** Reads the cache could not answer (it lagged behind our write): a GET each. */
  fetched = 0;

  constructor(
    cache: Pick<Informer<NodeOp>, 'get'>,
    fetch: (key: string) => Promise<NodeOp | undefined>,
    now: () => number = Date.now,
  ) {
    this.cache = cache;
    this.fetch = fetch;
    this.now = now;
  }

  /** Notes what a write of ours returned (its resourceVersion); a write that returned nothing is not noted. */
  wrote(key: string, object: { metadata?: { resourceVersion?: string } } | undefined): void {
    const resourceVersion = object?.metadata?.resourceVersion;
    if (resourceVersion) this.written.set(key, { resourceVersion, at: this.now() });
  }

  /** The NodeOp `key` as of our last write to it at least; undefined when it does not exist. */
  async read(key: string): Promise<NodeOp | undefined> {
    const { name, namespace } = parseKey(key);
    const cached = this.cache.get(name, namespace);
    const expected = this.written.get(key);
    if (!expected) return cached;
    if (isAtLeast(cached?.metadata?.resourceVersion, expected.resourceVersion) || this.expired(expected.at)) {
      this.written.delete(key);
      return cached;
    }
    this.fetched++;
    const fresh = await this.fetch(key);
    if (!fresh) this.written.delete(key);
    return fresh ? cachedNodeOp(fresh) : undefined;
  }

  /**
   * True when `op` is the version one of our writes produced and differs from `old` in its status
   * only: the update echoes what we wrote, and nothing in it is news to the reconciler.
   */
  isOwnStatusWrite(op: NodeOp, old: NodeOp): boolean {
    const key = objectKey(op);
    const expected = this.written.get(key);
    if (expected === undefined) return false;
    // The cache has caught up with our write: nothing to wait for any more (and nothing kept).
    if (isAtLeast(op.metadata.resourceVersion, expected.resourceVersion)) this.written.delete(key);
    if (expected.resourceVersion !== op.metadata.resourceVersion) return false;
    const { resourceVersion: _new, ...metadata } = op.metadata;
    const { resourceVersion: _old, ...oldMetadata } = old.metadata;
    return JSON.stringify([metadata, op.spec]) === JSON.stringify([oldMetadata, old.spec]);
  }

  /** A deleted NodeOp's write is no longer waited for. */
  forget(key: string): void {
    this.written.delete(key);
  }

  /** Writes the cache has not shown yet (each is forgotten once it does, or after the TTL). */
  get pending(): number {
    return this.written.size;
  }

  private expired(at: number): boolean {
    return this.now() - at > EXPECTATION_TTL_MS;
  }
}
