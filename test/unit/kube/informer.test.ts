/**
 * The informer's list/watch lifecycle against a scripted ListWatch and a fake clock: selectors on
 * list AND watch, paging, synced only after a successful list, restart after ANY watch error with
 * capped exponential backoff and no double restart, resume from the last resourceVersion, relist on
 * 410 with deletes for vanished objects, periodic resync, and handlers that cannot break the cache.
 */
import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  Informer,
  type ListOptions,
  type ListPage,
  type ListWatch,
  type WatchOptions,
} from '../../../src/kube/informer.js';
import { silentLogger } from '../../../src/kube/logger.js';
import { RuntimeMetrics } from '../../../src/kube/metrics.js';
import { FakeClock, settle } from './fake-clock.js';

type Obj = KubernetesObject;

const cm = (
  name: string,
  rv: string,
  namespace = 'ns',
  data: Record<string, string> = {},
): Obj & { data: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, resourceVersion: rv, managedFields: [{ manager: 'x' }] },
  data,
});

interface FakeWatch {
  options: WatchOptions;
  aborted: boolean;
  emit(type: string, object: unknown): void;
  end(err?: unknown): void;
}

/** A scripted API: `listResults` are consumed in order (an Error rejects), watches are recorded. */
class FakeListWatch implements ListWatch<Obj> {
  lists: ListOptions[] = [];
  watches: FakeWatch[] = [];
  listResults: (ListPage<Obj> | Error)[] = [];
  failWatchStart = false;

  async list(options: ListOptions): Promise<ListPage<Obj>> {
    this.lists.push(options);
    const next = this.listResults.shift();
    if (!next) throw new Error('test did not script this list');
    if (next instanceof Error) throw next;
    return structuredClone(next);
  }

  async watch(options: WatchOptions, onEvent: (type: string, object: unknown) => void, onEnd: (err: unknown) => void) {
    if (this.failWatchStart) throw new Error('connect ECONNREFUSED');
    const w: FakeWatch = {
      options,
      aborted: false,
      emit: (t, o) => onEvent(t, structuredClone(o)),
      end: (err) => onEnd(err ?? null),
    };
    this.watches.push(w);
    return { abort: () => (w.aborted = true) };
  }

  get lastWatch(): FakeWatch {
    return this.watches[this.watches.length - 1]!;
  }
}

const apiError = (code: number): Error => Object.assign(new Error(`HTTP ${code}`), { statusCode: code });

function setup(options: { resyncMs?: number; labelSelector?: string; fieldSelector?: string } = {}) {
  const clock = new FakeClock();
  const source = new FakeListWatch();
  const metrics = new RuntimeMetrics();
  const informer = new Informer<Obj>(source, {
    resource: 'configmaps',
    logger: silentLogger(),
    clock,
    metrics,
    resyncMs: options.resyncMs ?? 0,
    backoff: { initialMs: 1000, maxMs: 8000 },
    ...options,
  });
  const events: string[] = [];
  informer.on({
    add: (o) => events.push(`add ${o.metadata?.name}@${o.metadata?.resourceVersion}`),
    update: (o, old) =>
      events.push(`update ${o.metadata?.name}@${old.metadata?.resourceVersion}->${o.metadata?.resourceVersion}`),
    delete: (o) => events.push(`delete ${o.metadata?.name}`),
  });
  return { clock, source, informer, events, metrics };
}

async function synced(metrics: RuntimeMetrics): Promise<number | undefined> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'skyhook_informer_synced');
  return metric?.values.find((v) => v.labels['resource'] === 'configmaps')?.value;
}

describe('Informer', () => {
  it('applies each list page to the cache as it arrives (transformed), and drops what the whole list lacked only at its end', async () => {
    const { source, informer, clock, events } = setup();
    source.listResults = [{ items: [cm('a', '1'), cm('gone', '2')], metadata: { resourceVersion: '3' } }];
    informer.start();
    await clock.advance(0);
    events.length = 0;
    // A relist (410) whose second page the test holds back: the first page is in the cache already.
    let releaseSecondPage: (page: ListPage<Obj>) => void = () => undefined;
    const list = source.list.bind(source);
    source.list = async (options: ListOptions): Promise<ListPage<Obj>> => {
      if (!options.continue) return list(options);
      source.lists.push(options);
      return new Promise((resolve) => {
        releaseSecondPage = resolve;
      });
    };
    source.listResults = [{ items: [cm('a', '4')], metadata: { resourceVersion: '6', continue: 'tok' } }];
    source.lastWatch.end(apiError(410));
    await clock.advance(0);
    expect(events).toEqual(['update a@1->4']);
    expect(informer.get('a', 'ns')?.metadata?.managedFields).toBeUndefined();
    // Not listed yet is not gone yet.
    expect(informer.get('gone', 'ns')).toBeDefined();
    releaseSecondPage({ items: [cm('b', '5')], metadata: { resourceVersion: '6' } });
    await clock.advance(0);
    expect(events).toEqual(['update a@1->4', 'add b@5', 'delete gone']);
    expect(source.lastWatch.options.resourceVersion).toBe('6');
  });

  it('applies the label and field selectors to every list page and to the watch, following continue tokens', async () => {
    const { source, informer, clock, events } = setup({ labelSelector: 'app=x', fieldSelector: 'metadata.name!=y' });
    source.listResults = [
      { items: [cm('a', '1')], metadata: { resourceVersion: '5', continue: 'tok' } },
      { items: [cm('b', '2')], metadata: { resourceVersion: '7' } },
    ];
    informer.start();
    await clock.advance(0);
    expect(source.lists).toEqual([
      { labelSelector: 'app=x', fieldSelector: 'metadata.name!=y', limit: 500 },
      { labelSelector: 'app=x', fieldSelector: 'metadata.name!=y', limit: 500, continue: 'tok' },
    ]);
    expect(source.watches.map((w) => w.options)).toEqual([
      { labelSelector: 'app=x', fieldSelector: 'metadata.name!=y', resourceVersion: '7', allowWatchBookmarks: true },
    ]);
    expect(events).toEqual(['add a@1', 'add b@2']);
    expect(informer.get('a', 'ns')?.metadata?.managedFields).toBeUndefined();
  });

  it('is synced only after a list succeeds; a failing first list is retried with backoff', async () => {
    const { source, informer, clock, metrics } = setup();
    source.listResults = [apiError(500), apiError(503), { items: [cm('a', '1')], metadata: { resourceVersion: '3' } }];
    let ready = false;
    void informer.waitForSync(60_000).then(() => (ready = true));
    informer.start();
    await clock.advance(0);
    expect(informer.synced).toBe(false);
    expect(await synced(metrics)).toBe(0);
    expect(clock.pending()).toContain(1000);
    await clock.advance(1000);
    expect(informer.synced).toBe(false);
    await clock.advance(1999);
    expect(source.lists).toHaveLength(2);
    await clock.advance(1);
    expect(source.lists).toHaveLength(3);
    expect(informer.synced).toBe(true);
    expect(ready).toBe(true);
    expect(await synced(metrics)).toBe(1);
    expect(informer.restarts).toBe(2);
  });

  it('waitForSync rejects with a hint when the informer never syncs', async () => {
    const { source, informer, clock } = setup();
    source.listResults = Array.from({ length: 20 }, () => apiError(403));
    informer.start();
    const waiting = informer.waitForSync(5000);
    const expectation = expect(waiting).rejects.toThrow(/configmaps not synced after 5000 ms.*RBAC/);
    await clock.advance(5000);
    await expectation;
  });

  it('fires add, update (only on a new resourceVersion) and delete from watch events; get and list see them', async () => {
    const { source, informer, clock, events } = setup();
    source.listResults = [{ items: [], metadata: { resourceVersion: '1' } }];
    informer.start();
    await clock.advance(0);
    source.lastWatch.emit('ADDED', cm('a', '2'));
    source.lastWatch.emit('ADDED', cm('b', '3', 'other'));
    source.lastWatch.emit('MODIFIED', cm('a', '2'));
    source.lastWatch.emit('MODIFIED', cm('a', '4', 'ns', { k: 'v' }));
    source.lastWatch.emit('BOOKMARK', { metadata: { resourceVersion: '9' } });
    source.lastWatch.emit('DELETED', cm('b', '10', 'other'));
    expect(events).toEqual(['add a@2', 'add b@3', 'update a@2->4', 'delete b']);
    expect((informer.get('a', 'ns') as { data?: unknown }).data).toEqual({ k: 'v' });
    expect(informer.get('b', 'other')).toBeUndefined();
    expect(informer.list().map((o) => o.metadata?.name)).toEqual(['a']);
    expect(informer.list('other')).toEqual([]);
    // A later watch resumes from the bookmark/last event's resourceVersion.
    source.lastWatch.end(apiError(500));
    await clock.advance(1000);
    expect(source.lastWatch.options.resourceVersion).toBe('10');
  });

  describe('own writes (write-through)', () => {
    /** An informer synced on a list of one object, `a` at version 1, its events cleared. */
    const syncedWithA = async () => {
      const started = setup();
      started.source.listResults = [{ items: [cm('a', '1')], metadata: { resourceVersion: '1' } }];
      started.informer.start();
      await started.clock.advance(0);
      started.events.length = 0;
      return started;
    };

    it('stores and fires a written object at once; its own watch event then changes nothing, older events are skipped', async () => {
      const { source, informer, events } = await syncedWithA();
      const written = cm('a', '5', 'ns', { k: 'ours' });
      expect(informer.applyOwnWrite(written)).toBe(true);
      // The caller's object is left as the API server returned it (the cache stores a trimmed copy).
      expect(written.metadata?.managedFields).toBeDefined();
      expect(informer.get('a', 'ns')?.metadata?.managedFields).toBeUndefined();
      expect(informer.applyOwnWrite(cm('new', '6', 'ns'))).toBe(true);
      expect(events).toEqual(['update a@1->5', 'add new@6']);
      // Someone else's write before ours, then ours: both already superseded or shown.
      const stored = informer.get('a', 'ns');
      source.lastWatch.emit('MODIFIED', cm('a', '3', 'ns', { k: 'theirs' }));
      source.lastWatch.emit('MODIFIED', cm('a', '5', 'ns', { k: 'ours' }));
      source.lastWatch.emit('ADDED', cm('new', '6'));
      expect(events).toEqual(['update a@1->5', 'add new@6']);
      // The echo of the stored version is not transformed and stored again: the cached object stays.
      expect(informer.get('a', 'ns')).toBe(stored);
      expect((informer.get('a', 'ns') as { data?: unknown }).data).toEqual({ k: 'ours' });
      // A write older than what the cache shows is not stored; a later event is applied as always.
      expect(informer.applyOwnWrite(cm('a', '4'))).toBe(false);
      source.lastWatch.emit('MODIFIED', cm('a', '8', 'ns', { k: 'later' }));
      expect(events).toEqual(['update a@1->5', 'add new@6', 'update a@5->8']);
      // The watch still moves the informer's own clock; write-through does not.
      expect(informer.lastSyncResourceVersion).toBe('8');
    });

    it('keeps an object created after a relist was read, and skips listed versions older than the cached one', async () => {
      const { source, informer, clock, events } = await syncedWithA();
      informer.applyOwnWrite(cm('a', '7'));
      informer.applyOwnWrite(cm('created', '8'));
      // A relist read at version 6: before both writes.
      source.listResults = [{ items: [cm('a', '2')], metadata: { resourceVersion: '6' } }];
      source.lastWatch.end(apiError(410));
      await clock.advance(0);
      expect(informer.get('a', 'ns')?.metadata?.resourceVersion).toBe('7');
      expect(informer.get('created', 'ns')).toBeDefined();
      expect(events).toEqual(['update a@1->7', 'add created@8']);
      // A deletion older than the cached object is of an earlier life of the name: skipped.
      source.lastWatch.emit('DELETED', cm('created', '7'));
      expect(informer.get('created', 'ns')).toBeDefined();
      source.lastWatch.emit('DELETED', cm('created', '9'));
      expect(informer.get('created', 'ns')).toBeUndefined();
    });

    it("leaves out objects outside the informer's selectors, and versions that cannot be ordered", async () => {
      const labelled = setup({ labelSelector: 'app' });
      labelled.source.listResults = [{ items: [], metadata: { resourceVersion: '1' } }];
      labelled.informer.start();
      await labelled.clock.advance(0);
      expect(labelled.informer.applyOwnWrite(cm('plain', '2'))).toBe(false);
      const app = cm('app', '3');
      app.metadata!.labels = { app: 'x' };
      expect(labelled.informer.applyOwnWrite(app)).toBe(true);
      expect(labelled.informer.applyOwnWrite(cm('opaque', 'abc'))).toBe(false);
      const fielded = setup({ fieldSelector: 'metadata.name=a' });
      expect(fielded.informer.applyOwnWrite(cm('a', '2'))).toBe(false);
      expect(labelled.informer.list().map((o) => o.metadata?.name)).toEqual(['app']);
    });
  });

  // Read-your-writes (write-expectations.ts) tells a deleted object from one not seen yet by this version.
  it('lastSyncResourceVersion is the newest resourceVersion the cache reflects: list, watch events, bookmarks, relists', async () => {
    const { source, informer, clock } = setup();
    source.listResults = [
      { items: [cm('a', '2')], metadata: { resourceVersion: '5' } },
      { items: [], metadata: { resourceVersion: '30' } },
    ];
    expect(informer.lastSyncResourceVersion).toBe('');
    informer.start();
    await clock.advance(0);
    expect(informer.lastSyncResourceVersion).toBe('5');
    const seen: string[] = [];
    informer.on({ add: () => {}, update: () => {}, delete: () => seen.push(informer.lastSyncResourceVersion) });
    source.lastWatch.emit('MODIFIED', cm('a', '7'));
    expect(informer.lastSyncResourceVersion).toBe('7');
    source.lastWatch.emit('BOOKMARK', { metadata: { resourceVersion: '12' } });
    expect(informer.lastSyncResourceVersion).toBe('12');
    // A handler told of a deletion already sees the deletion's version.
    source.lastWatch.emit('DELETED', cm('a', '15'));
    expect(seen).toEqual(['15']);
    // An error event moves nothing; the relist after a 410 moves it to the list's version.
    source.lastWatch.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    expect(informer.lastSyncResourceVersion).toBe('15');
    await clock.advance(0);
    expect(informer.lastSyncResourceVersion).toBe('30');
  });

  it('restarts after any watch error with doubling backoff up to the cap, resuming without a relist; an event resets the backoff', async () => {
    const { source, informer, clock, metrics } = setup();
    source.listResults = [{ items: [], metadata: { resourceVersion: '1' } }];
    informer.start();
    await clock.advance(0);
    const delays: number[] = [];
    const errors: unknown[] = [
      apiError(500),
      new Error('socket hang up'),
      apiError(403),
      new TypeError('bug'),
      apiError(500),
    ];
    for (const err of errors) {
      const before = source.watches.length;
      source.lastWatch.end(err);
      delays.push(clock.pending()[0]!);
      await clock.advance(delays[delays.length - 1]!);
      expect(source.watches).toHaveLength(before + 1);
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(source.lists).toHaveLength(1);
    expect(informer.synced).toBe(true);
    source.lastWatch.emit('ADDED', cm('a', '5'));
    source.lastWatch.end(apiError(500));
    expect(clock.pending()[0]).toBe(1000);
    const restarts = (await metrics.registry.getMetricsAsJSON()).find(
      (m) => m.name === 'skyhook_informer_restarts_total',
    );
    expect(restarts?.values[0]?.value).toBe(6);
  });

  it('restarts once when one watch reports an ERROR event and then ends', async () => {
    const { source, informer, clock } = setup();
    source.listResults = [{ items: [], metadata: { resourceVersion: '1' } }];
    informer.start();
    await clock.advance(0);
    const first = source.lastWatch;
    first.emit('ERROR', { kind: 'Status', code: 500, reason: 'InternalError' });
    first.end(apiError(500));
    first.end(null);
    first.emit('ADDED', cm('late', '9'));
    expect(first.aborted).toBe(true);
    expect(clock.pending()).toEqual([1000]);
    await clock.advance(10_000);
    expect(source.watches).toHaveLength(2);
    expect(informer.get('late', 'ns')).toBeUndefined();
    expect(informer.restarts).toBe(1);
  });

  it('restarts when the watch cannot even start', async () => {
    const { source, informer, clock } = setup();
    source.listResults = [{ items: [], metadata: { resourceVersion: '1' } }];
    source.failWatchStart = true;
    informer.start();
    await clock.advance(0);
    expect(informer.restarts).toBe(1);
    source.failWatchStart = false;
    await clock.advance(1000);
    expect(source.watches).toHaveLength(1);
  });

  it('on 410 Gone lists again at once, firing delete for objects that vanished and update for changed ones', async () => {
    const { source, informer, clock, events } = setup();
    source.listResults = [
      { items: [cm('a', '1'), cm('b', '2'), cm('c', '3')], metadata: { resourceVersion: '3' } },
      { items: [cm('a', '1'), cm('c', '8'), cm('d', '9')], metadata: { resourceVersion: '9' } },
    ];
    informer.start();
    await clock.advance(0);
    events.length = 0;
    source.lastWatch.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    await clock.advance(0);
    expect(source.lists).toHaveLength(2);
    expect(events.sort()).toEqual(['add d@9', 'delete b', 'update c@3->8']);
    expect(source.lastWatch.options.resourceVersion).toBe('9');

    // A 410 as the HTTP status of the watch request does the same.
    source.listResults = [{ items: [], metadata: { resourceVersion: '20' } }];
    source.lastWatch.end(apiError(410));
    await clock.advance(0);
    expect(source.lists).toHaveLength(3);
    expect(informer.list()).toEqual([]);
  });

  it('a watch that ends quietly after a while resumes at once; one that ends at once backs off', async () => {
    const { source, informer, clock } = setup();
    source.listResults = [{ items: [], metadata: { resourceVersion: '1' } }];
    informer.start();
    await clock.advance(0);
    await clock.advance(30_000);
    source.lastWatch.end(Object.assign(new Error('aborted'), { name: 'TimeoutError' }));
    await clock.advance(0);
    expect(source.watches).toHaveLength(2);
    expect(informer.restarts).toBe(0);
    source.lastWatch.end(null);
    expect(clock.pending()).toEqual([1000]);
    expect(informer.restarts).toBe(1);
  });

  it('a watch the server closes soon after it delivered events (a reader behind in a burst) resumes at once from the last event', async () => {
    const { source, informer, clock, events } = setup();
    source.listResults = [{ items: [], metadata: { resourceVersion: '1' } }];
    informer.start();
    await clock.advance(0);
    await clock.advance(100);
    source.lastWatch.emit('ADDED', cm('a', '2'));
    source.lastWatch.end(null);
    await clock.advance(0);
    expect(clock.pending()).toEqual([]);
    expect(source.watches).toHaveLength(2);
    expect(source.lastWatch.options.resourceVersion).toBe('2');
    expect(informer.restarts).toBe(0);
    expect(events).toEqual(['add a@2']);
    // The new watch ends at once without an event: that one backs off.
    source.lastWatch.end(null);
    expect(clock.pending()).toEqual([1000]);
    expect(informer.restarts).toBe(1);
  });

  it('lists again every resyncMs and fires update for every object, even unchanged ones', async () => {
    const { source, informer, clock, events } = setup({ resyncMs: 60_000 });
    source.listResults = [
      { items: [cm('a', '1')], metadata: { resourceVersion: '1' } },
      { items: [cm('a', '1')], metadata: { resourceVersion: '4' } },
    ];
    informer.start();
    await clock.advance(0);
    // Quiet watch ends in between must not postpone the resync.
    await clock.advance(30_000);
    source.lastWatch.end(null);
    await clock.advance(29_999);
    expect(source.lists).toHaveLength(1);
    await clock.advance(1);
    expect(source.lists).toHaveLength(2);
    expect(source.watches[1]!.aborted).toBe(true);
    expect(events).toEqual(['add a@1', 'update a@1->1']);
    expect(source.lastWatch.options.resourceVersion).toBe('4');
  });

  it('a throwing handler neither breaks the cache nor the other handlers; late handlers get the cache replayed', async () => {
    const { source, informer, clock, events } = setup();
    informer.on({
      add: () => {
        throw new Error('boom');
      },
    });
    source.listResults = [{ items: [cm('a', '1')], metadata: { resourceVersion: '1' } }];
    informer.start();
    await clock.advance(0);
    source.lastWatch.emit('ADDED', cm('b', '2'));
    expect(events).toEqual(['add a@1', 'add b@2']);
    expect(informer.list()).toHaveLength(2);
    const replayed: string[] = [];
    informer.on({ add: (o) => replayed.push(o.metadata!.name!) });
    expect(replayed.sort()).toEqual(['a', 'b']);
  });

  it('stop aborts the watch, cancels pending restarts and ignores late events', async () => {
    const { source, informer, clock, events } = setup({ resyncMs: 1000 });
    source.listResults = [{ items: [], metadata: { resourceVersion: '1' } }];
    informer.start();
    await clock.advance(0);
    const w = source.lastWatch;
    await informer.stop();
    expect(w.aborted).toBe(true);
    expect(informer.synced).toBe(false);
    w.emit('ADDED', cm('a', '2'));
    w.end(apiError(500));
    await clock.advance(100_000);
    expect(events).toEqual([]);
    expect(source.watches).toHaveLength(1);
    expect(source.lists).toHaveLength(1);
    expect(clock.pending()).toEqual([]);
    await settle();
  });
});
