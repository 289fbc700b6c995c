/**
 * Read-your-writes over the NodeOp cache. A reconcile used to GET its NodeOp from the API server,
 * because a cache that has not yet seen this process's last status write could show a node as not
 * started and start it (take its slot) twice. At 1000 nodes that was a GET per reconcile. Now each
 * status (or finalizer) write notes the resourceVersion it produced; a reconcile reads the cache
 * when the cache shows that version or a later one, and only while the cache lags behind our own
 * write does it GET (rare: the watch event of a write arrives within milliseconds). Others' writes
 * reach us as watch events like any change; the Job cache's busy nodes (pacing.ts) guard slots too.
 *
 * Nothing is forgotten on a timer: a write is forgotten once the cache shows it (or a later version),
 * or once the NodeOp is absent from a cache whose informer has got past the write (deleted since;
 * its lastSyncResourceVersion), or the GET finds it gone. A 30 s limit used to read the stale cache
 * after a lag that long, which under a loaded API server (watches a minute late at 5000 nodes) could
 * start a node twice. A cache that never catches up costs a GET per reconcile, never a wrong read.
 *
 * The same write's watch event is also how `isOwnStatusWrite` recognises an update that only
 * echoes our own status write, which wakes nobody (controller.ts). The echo often arrives before
 * the write's response (the API server sends the watch event and the reply at once), when its
 * resourceVersion is not known yet: a status write is therefore marked in flight before it is sent
 * (`sendStatus`), a status-only update arriving meanwhile is held, and once the response names our
 * version a held update of any other version (someone else's status write) wakes the NodeOp after
 * all (`missed`); so does every held update when the write fails.
 */
import type { NodeOp, NodeOpSpec } from '../../api/nodeop.js';
import { parseKey } from '../../kube/controller.js';
import { objectKey, type Informer } from '../../kube/informer.js';
import { cachedNodeOp, finishedNodeOpSpec, isFinishedNodeOp, readableNodeOp } from '../cached-nodeops.js';
import { isAtLeast, reflectsWrite } from '../../kube/resource-version.js';

export class NodeOpReads {
  private readonly written = new Map<string, { resourceVersion: string }>();
  /** Status writes sent and not answered yet, by key: the versions of the status-only updates held meanwhile. */
  private readonly sending = new Map<string, string[]>();
  /** Wakes a NodeOp whose held update turned out not to be our write's echo (the controller's queue). */
  missed: (key: string) => void = () => {};
  /** The NodeOp cache; with its informer's lastSyncResourceVersion, a NodeOp deleted since our write reads as gone without a GET. */
  private readonly cache: Pick<Informer<NodeOp>, 'get'> & { readonly lastSyncResourceVersion?: string };
  private readonly fetch: (key: string) => Promise<NodeOp | undefined>;
  /** Reads the cache could not answer (it lagged behind our write): a GET each. */
  fetched = 0;

  constructor(
    cache: Pick<Informer<NodeOp>, 'get'> & { readonly lastSyncResourceVersion?: string },
    fetch: (key: string) => Promise<NodeOp | undefined>,
  ) {
    this.cache = cache;
    this.fetch = fetch;
  }

  /** Notes what a write of ours returned (its resourceVersion); a write that returned nothing is not noted. */
  wrote(key: string, object: { metadata?: { resourceVersion?: string } } | undefined): void {
    const resourceVersion = object?.metadata?.resourceVersion;
    if (resourceVersion) this.written.set(key, { resourceVersion });
  }

  /**
   * Sends a status write (`write`) marked in flight, so that its echo is recognised even when it
   * arrives before the response (see the header), and notes the version it produced.
   */
  async sendStatus<T extends { metadata?: { resourceVersion?: string } } | undefined>(
    key: string,
    write: () => Promise<T>,
  ): Promise<T> {
    const held: string[] = [];
    this.sending.set(key, held);
    let produced: string | undefined;
    try {
      const result = await write();
      this.wrote(key, result);
      produced = result?.metadata?.resourceVersion;
      return result;
    } finally {
      if (this.sending.get(key) === held) this.sending.delete(key);
      if (held.some((rv) => rv !== produced)) this.missed(key);
    }
  }

  /** The NodeOp `key` as of our last write to it at least; undefined when it does not exist. */
  async read(key: string): Promise<NodeOp | undefined> {
    const { name, namespace } = parseKey(key);
    const cached = this.cache.get(name, namespace);
    const expected = this.written.get(key);
    if (!expected) return cached;
    if (reflectsWrite(cached, this.cache.lastSyncResourceVersion, expected.resourceVersion)) {
      this.written.delete(key);
      return cached;
    }
    return this.get(key, cachedNodeOp);
  }

  /**
   * The NodeOp `key` whole, from the API server: a finished NodeOp is cached without what only
   * starts a node (cached-nodeops.ts), for the rare reconcile that must (reconciler.ts).
   */
  readWhole(key: string): Promise<NodeOp | undefined> {
    return this.get(key, readableNodeOp);
  }

  private async get(key: string, as: (op: NodeOp) => NodeOp): Promise<NodeOp | undefined> {
    this.fetched++;
    const fresh = await this.fetch(key);
    if (!fresh) this.written.delete(key);
    return fresh ? as(fresh) : undefined;
  }

  /**
   * True when `op` is the version one of our writes produced and differs from `old` in its status
   * only: the update echoes what we wrote, and nothing in it is news to the reconciler.
   */
  isOwnStatusWrite(op: NodeOp, old: NodeOp): boolean {
    const key = objectKey(op);
    const rv = op.metadata.resourceVersion ?? '';
    const held = this.sending.get(key);
    // A status write of ours is on its way: this may be its echo; judged once its response names its version.
    if (held !== undefined && statusOnly(op, old)) {
      held.push(rv);
      return true;
    }
    const expected = this.written.get(key);
    if (expected === undefined) return false;
    // The cache has caught up with our write: nothing to wait for any more (and nothing kept).
    if (isAtLeast(rv, expected.resourceVersion)) this.written.delete(key);
    return expected.resourceVersion === rv && statusOnly(op, old);
  }

  /** A deleted NodeOp's write is no longer waited for. */
  forget(key: string): void {
    this.written.delete(key);
  }

  /** Status writes sent and not answered yet. */
  get inFlight(): number {
    return this.sending.size;
  }

  /** Writes the cache has not shown yet (each is forgotten once it does, or once the NodeOp is gone). */
  get pending(): number {
    return this.written.size;
  }
}

/**
 * `op` differs from `old` in its status only (and its resourceVersion). The status write that
 * finishes a NodeOp changes its cached spec (cached-nodeops.ts keeps less of a finished one), not
 * its spec: when either is finished both specs are compared as a finished one is kept.
 */
function statusOnly(op: NodeOp, old: NodeOp): boolean {
  const { resourceVersion: _new, ...metadata } = op.metadata;
  const { resourceVersion: _old, ...oldMetadata } = old.metadata;
  const finished = isFinishedNodeOp(op) || isFinishedNodeOp(old);
  const spec = (o: NodeOp): NodeOpSpec => (finished ? finishedNodeOpSpec(o.spec) : o.spec);
  return JSON.stringify([metadata, spec(op)]) === JSON.stringify([oldMetadata, spec(old)]);
}
