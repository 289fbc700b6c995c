/**
 * The informer store's indexes (client-go's Indexers): objects filed under the values an index
 * function gives them, kept current through adds, updates (refiled when the value changes),
 * deletes and whole relists, so `byIndex` always equals a filter over the whole cache. Also: a
 * watch's ERROR event (a bare Status) is described by its message, not "[object Object]", and the
 * real watch's server-side timeout spreads over 5 to 10 minutes.
 */
import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import fc from 'fast-check';
import { errorMessage, isGone } from '../../../src/kube/errors.js';
import { InformerStore } from '../../../src/kube/informer-store.js';
import { watchTimeoutSeconds } from '../../../src/kube/list-watch.js';
import { silentLogger } from '../../../src/kube/logger.js';

type Pod = KubernetesObject & { spec?: { nodeName?: string } };

const pod = (name: string, rv: string, nodeName?: string, owners: string[] = []): Pod => ({
  metadata: {
    name,
    namespace: 'ns',
    resourceVersion: rv,
    annotations: Object.fromEntries(owners.map((owner) => [`owner/${owner}`, 'x'])),
  },
  ...(nodeName ? { spec: { nodeName } } : {}),
});

const byNode = (object: Pod): string[] => (object.spec?.nodeName ? [object.spec.nodeName] : []);
const byOwners = (object: Pod): string[] =>
  Object.keys(object.metadata?.annotations ?? {}).map((key) => key.slice('owner/'.length));
const names = (objects: KubernetesObject[]): string[] => objects.map((o) => o.metadata?.name ?? '').sort();

describe('InformerStore indexes', () => {
  it('files objects on add, refiles them on update, unfiles them on delete', () => {
    const store = new InformerStore<Pod>(silentLogger(), undefined);
    store.addIndex('node', byNode);
    store.apply('ADDED', pod('a', '1', 'n1'));
    store.apply('ADDED', pod('b', '2', 'n1'));
    store.apply('ADDED', pod('c', '3'));
    expect(names(store.byIndex('node', 'n1'))).toEqual(['a', 'b']);
    store.apply('MODIFIED', pod('b', '4', 'n2'));
    expect(names(store.byIndex('node', 'n1'))).toEqual(['a']);
    expect(names(store.byIndex('node', 'n2'))).toEqual(['b']);
    store.apply('DELETED', pod('a', '5', 'n1'));
    expect(store.byIndex('node', 'n1')).toEqual([]);
    expect(store.byIndex('node', 'nowhere')).toEqual([]);
  });

  it('files what is already cached when the index is added, and keeps the first function of a name', () => {
    const store = new InformerStore<Pod>(silentLogger(), undefined);
    store.apply('ADDED', pod('a', '1', 'n1', ['s1', 's2']));
    store.addIndex('owner', byOwners);
    store.addIndex('owner', byNode);
    expect(names(store.byIndex('owner', 's2'))).toEqual(['a']);
    expect(() => store.byIndex('missing', 'x')).toThrow("no index 'missing'");
  });

  it('equals a filter of the whole cache after any history of events and relists', () => {
    const event = fc.record({
      type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED', 'RELIST'),
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      node: fc.option(fc.constantFrom('n1', 'n2', 'n3'), { nil: undefined }),
      owners: fc.subarray(['s1', 's2', 's3']),
    });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), (events) => {
        const store = new InformerStore<Pod>(silentLogger(), undefined);
        store.addIndex('node', byNode);
        store.addIndex('owner', byOwners);
        let rv = 0;
        for (const e of events) {
          const object = pod(e.name, String(++rv), e.node, e.owners);
          if (e.type === 'RELIST') {
            // A relist of one page, as Informer.listInto applies it.
            const seen = new Set<string>();
            store.applyListPage([object, pod('z', String(++rv), 'n1')], false, seen);
            store.dropUnlisted(seen);
          } else store.apply(e.type, object);
        }
        const all = store.list();
        for (const node of ['n1', 'n2', 'n3'])
          expect(names(store.byIndex('node', node))).toEqual(names(all.filter((o) => byNode(o).includes(node))));
        for (const owner of ['s1', 's2', 's3'])
          expect(names(store.byIndex('owner', owner))).toEqual(names(all.filter((o) => byOwners(o).includes(owner))));
      }),
    );
  });
});

describe('watch errors and timeouts', () => {
  it("describes a watch's ERROR Status by its reason and message", () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      code: 410,
      reason: 'Expired',
      message: 'too old resource version: 5 (9)',
    };
    expect(errorMessage(status)).toBe('Expired: too old resource version: 5 (9)');
    expect(isGone(status)).toBe(true);
  });

  it('asks the API server to end a watch after 5 to 10 minutes, spread', () => {
    expect(watchTimeoutSeconds(() => 0)).toBe(300);
    expect(watchTimeoutSeconds(() => 0.999)).toBe(599);
  });
});
