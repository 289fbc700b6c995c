/**
 * A NodeOp reconcile reads its NodeOp from the cache, read-your-writes: the cache once it shows our
 * last write (or a later version), the API server only while the cache lags behind it; and the
 * update that merely echoes our own status write is recognised (it wakes nobody).
 */
import { describe, expect, it, jest } from '@jest/globals';
import type { NodeOp } from '../../../../src/api/nodeop.js';
import { cachedNodeOp } from '../../../../src/controllers/cached-nodeops.js';
import { NodeOpReads } from '../../../../src/controllers/nodeop/nodeop-reads.js';
import { objectKey } from '../../../../src/kube/informer.js';
import { isAtLeast } from '../../../../src/kube/resource-version.js';
import { InformerStore } from '../../../../src/kube/informer-store.js';
import { silentLogger } from '../../../../src/kube/logger.js';
import { stageNodeOp } from '../stage-objects.js';

const op = (rv: string, phase: 'Pending' | 'Running' = 'Pending', extra: Partial<NodeOp['metadata']> = {}): NodeOp =>
  ({
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'NodeOp',
    metadata: { name: 'op', namespace: 'ns', resourceVersion: rv, ...extra },
    spec: { targetNodes: ['n1'] },
    status: { phase },
  }) as NodeOp;

function setup() {
  const cache = new InformerStore<NodeOp>(silentLogger(), (o) => o);
  // The informer's lastSyncResourceVersion: how far the cache has got ('' before its first list).
  const informer = { synced: '' };
  const server = { current: op('5', 'Running') as NodeOp | undefined, gets: 0 };
  const reads = new NodeOpReads(
    {
      get: (name: string, namespace?: string) => cache.get(name, namespace),
      get lastSyncResourceVersion() {
        return informer.synced;
      },
    },
    async () => {
      server.gets++;
      return server.current;
    },
  );
  return { cache, server, reads, informer };
}

describe('NodeOpReads', () => {
  it('reads the cache when we wrote nothing, without a GET', async () => {
    const { cache, server, reads } = setup();
    cache.apply('ADDED', op('3'));
    expect((await reads.read('ns/op'))?.metadata.resourceVersion).toBe('3');
    expect(await reads.read('ns/gone')).toBeUndefined();
    expect(server.gets).toBe(0);
  });

  it('GETs while the cache lags behind our write, then reads the cache again once it caught up', async () => {
    const { cache, server, reads } = setup();
    cache.apply('ADDED', op('3'));
    reads.wrote('ns/op', op('5', 'Running'));
    expect((await reads.read('ns/op'))?.status?.phase).toBe('Running');
    expect(server.gets).toBe(1);
    expect(reads.fetched).toBe(1);
    cache.apply('MODIFIED', op('5', 'Running'));
    expect((await reads.read('ns/op'))?.metadata.resourceVersion).toBe('5');
    // A later version (someone else's write after ours) counts as caught up as well.
    reads.wrote('ns/op', op('6'));
    cache.apply('MODIFIED', op('7'));
    expect((await reads.read('ns/op'))?.metadata.resourceVersion).toBe('7');
    expect(server.gets).toBe(1);
  });

  it('a NodeOp deleted after our write reads as gone, and the GETs stop', async () => {
    const { server, reads } = setup();
    reads.wrote('ns/op', op('5'));
    server.current = undefined;
    expect(await reads.read('ns/op')).toBeUndefined();
    expect(await reads.read('ns/op')).toBeUndefined();
    expect(server.gets).toBe(1);
  });

  // A 30 s limit used to read the stale cache after a lag that long, and could start a node twice.
  it('never reads a cache that lags behind our write, however long it lags', async () => {
    const { cache, server, reads } = setup();
    cache.apply('ADDED', op('3'));
    reads.wrote('ns/op', op('9'));
    server.current = op('9', 'Running');
    jest.useFakeTimers({ now: 0 });
    try {
      for (const at of [0, 31_000, 10 * 60_000]) {
        jest.setSystemTime(at);
        expect((await reads.read('ns/op'))?.metadata.resourceVersion).toBe('9');
      }
    } finally {
      jest.useRealTimers();
    }
    expect(server.gets).toBe(3);
    expect(reads.pending).toBe(1);
  });

  it('reads a NodeOp deleted since our write as gone, without a GET, once its informer got past the write', async () => {
    const { server, reads, informer } = setup();
    reads.wrote('ns/op', op('9'));
    server.current = op('9', 'Running');
    // Not in the cache, which has not got to our write yet: it may not have seen the NodeOp at all.
    informer.synced = '8';
    expect((await reads.read('ns/op'))?.metadata.resourceVersion).toBe('9');
    expect(server.gets).toBe(1);
    informer.synced = '12';
    expect(await reads.read('ns/op')).toBeUndefined();
    expect(server.gets).toBe(1);
    expect(reads.pending).toBe(0);
  });

  it('recognises the echo of our own status write, and nothing else', () => {
    const { reads } = setup();
    reads.wrote('ns/op', op('5', 'Running'));
    expect(reads.isOwnStatusWrite(op('5', 'Running'), op('4'))).toBe(true);
    // Another version, or a change beside the status (a deletion, a finalizer), is news.
    expect(reads.isOwnStatusWrite(op('6', 'Running'), op('5', 'Running'))).toBe(false);
    expect(reads.isOwnStatusWrite(op('5', 'Running', { deletionTimestamp: new Date(0) }), op('4'))).toBe(false);
    expect(reads.isOwnStatusWrite(op('5', 'Running', { finalizers: ['x'] }), op('4'))).toBe(false);
  });

  it('recognises the echo of the status write that finishes a NodeOp, whose cached spec is trimmed by it', () => {
    const { reads } = setup();
    // As the informer caches them (cached-nodeops.ts): the running op whole, the finished one trimmed.
    const running = cachedNodeOp(stageNodeOp('node-a', 'running'));
    const written = stageNodeOp('node-a', 'succeeded');
    written.metadata.resourceVersion = '120035';
    const finished = cachedNodeOp(written);
    expect(finished.spec).not.toEqual(running.spec);
    reads.wrote(objectKey(written), written);
    expect(reads.isOwnStatusWrite(finished, running)).toBe(true);
    // An edit of the spec (a new generation) beside it is news, finished or not.
    const edited = cachedNodeOp({ ...written, metadata: { ...written.metadata, generation: 2 } });
    expect(reads.isOwnStatusWrite(edited, running)).toBe(false);
    const retargeted = { ...finished, spec: { ...finished.spec, targetNodes: ['node-b'] } };
    expect(reads.isOwnStatusWrite(retargeted, finished)).toBe(false);
  });

  it('reads a NodeOp whole from the API server when asked, finished or not', async () => {
    const { cache, server, reads } = setup();
    const finished = stageNodeOp('node-a', 'succeeded');
    cache.apply('ADDED', cachedNodeOp(finished));
    server.current = finished;
    expect((await reads.read(objectKey(finished)))?.spec.initSteps).toBeUndefined();
    expect(server.gets).toBe(0);
    const whole = await reads.readWhole(objectKey(finished));
    expect(whole?.spec).toEqual(finished.spec);
    expect(whole?.metadata.managedFields).toBeUndefined();
    expect(server.gets).toBe(1);
    expect(reads.fetched).toBe(1);
  });

  it("recognises the echo that arrives before the write's response, and wakes for any other held update", async () => {
    const { reads } = setup();
    const woken: string[] = [];
    reads.missed = (key) => woken.push(key);
    // The echo (version 5) arrives while the write is in flight: held, not news.
    await reads.sendStatus('ns/op', async () => {
      expect(reads.inFlight).toBe(1);
      expect(reads.isOwnStatusWrite(op('5', 'Running'), op('4'))).toBe(true);
      return op('5', 'Running');
    });
    expect(woken).toEqual([]);
    expect(reads.inFlight).toBe(0);
    // Someone else's status write (version 6) held during our write (version 7): woken once we know.
    await reads.sendStatus('ns/op', async () => {
      expect(reads.isOwnStatusWrite(op('6', 'Running'), op('5', 'Running'))).toBe(true);
      expect(reads.isOwnStatusWrite(op('7', 'Running'), op('6', 'Running'))).toBe(true);
      return op('7', 'Running');
    });
    expect(woken).toEqual(['ns/op']);
    // A change beside the status is never held; a failed write wakes for what it held.
    await expect(
      reads.sendStatus('ns/op', async () => {
        expect(reads.isOwnStatusWrite(op('8', 'Running', { finalizers: ['x'] }), op('7', 'Running'))).toBe(false);
        expect(reads.isOwnStatusWrite(op('9', 'Pending'), op('8', 'Running'))).toBe(true);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(woken).toEqual(['ns/op', 'ns/op']);
    expect(reads.inFlight).toBe(0);
  });

  it('keeps nothing once the cache has shown the write, or the NodeOp is deleted', () => {
    const { reads } = setup();
    reads.wrote('ns/op', op('5', 'Running'));
    expect(reads.isOwnStatusWrite(op('4'), op('3'))).toBe(false);
    expect(reads.pending).toBe(1);
    expect(reads.isOwnStatusWrite(op('5', 'Running'), op('4'))).toBe(true);
    expect(reads.pending).toBe(0);
    reads.wrote('ns/op', op('6'));
    reads.forget('ns/op');
    expect(reads.pending).toBe(0);
  });

  it('compares resourceVersions as numbers when they are, else only for equality', () => {
    expect(isAtLeast('10', '9')).toBe(true);
    expect(isAtLeast('9', '10')).toBe(false);
    expect(isAtLeast('abc', 'abc')).toBe(true);
    expect(isAtLeast('abd', 'abc')).toBe(false);
    expect(isAtLeast(undefined, '1')).toBe(false);
  });
});
