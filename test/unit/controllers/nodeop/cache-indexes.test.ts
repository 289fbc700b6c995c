/**
 * The NodeOp controller's lookups that replaced scans: NodeOps of a node (by target, by node in
 * status, by selector), a Job's pods, and targetNodes by name all give what the scans gave, on
 * random caches kept up to date through add, update and delete events.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { selectorMatches } from '../../../../src/api/label-selector.js';
import { KUBERNETES_NAMES } from '../../../../src/api/names.js';
import type { NodeOp } from '../../../../src/api/nodeop.js';
import { NodeOpsByNode, PodsByJob } from '../../../../src/controllers/nodeop/cache-indexes.js';
import { targetNodes, targetNodesOf } from '../../../../src/controllers/nodeop/pacing.js';
import { objectKey } from '../../../../src/kube/informer.js';
import { InformerStore } from '../../../../src/kube/informer-store.js';
import { silentLogger } from '../../../../src/kube/logger.js';

const NODES = ['n0', 'n1', 'n2', 'n3', 'n4', 'cp'];
const node = (name: string, labels: Record<string, string> = {}): V1Node => ({ metadata: { name, labels } });

/** The scan nodeOpsOfNode did before the index. */
function scanned(ops: NodeOp[], target: V1Node): string[] {
  const name = target.metadata?.name ?? '';
  return ops
    .filter(
      (op) =>
        op.status?.nodeStatuses?.[name] !== undefined ||
        (op.spec.targetNodes
          ? op.spec.targetNodes.includes(name)
          : selectorMatches(op.spec.nodeSelector, target.metadata?.labels ?? {})),
    )
    .map(objectKey)
    .sort();
}

const nodeOpArb = fc.record({
  name: fc.constantFrom('a', 'b', 'c', 'd'),
  targets: fc.option(fc.subarray(NODES), { nil: undefined }),
  pool: fc.constantFrom('x', 'y', undefined),
  started: fc.subarray(NODES),
});

function nodeOpOf(
  r: {
    name: string;
    targets: string[] | undefined;
    pool: string | undefined;
    started: string[];
  },
  rv: number,
): NodeOp {
  return {
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'NodeOp',
    metadata: { name: r.name, namespace: 'ns', resourceVersion: String(rv) },
    spec: {
      ...(r.targets ? { targetNodes: r.targets } : {}),
      ...(r.pool ? { nodeSelector: { matchLabels: { pool: r.pool } } } : {}),
    },
    status: { nodeStatuses: Object.fromEntries(r.started.map((n) => [n, { phase: 'Running' as const }])) },
  } as NodeOp;
}

describe('NodeOpsByNode', () => {
  it('finds for every node exactly the NodeOps the full scan finds, through adds, updates and deletes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), nodeOpArb), { maxLength: 30 }),
        fc.constantFrom('x', 'y'),
        (events, pool) => {
          const store = new InformerStore<NodeOp>(silentLogger(), (o) => o);
          const index = new NodeOpsByNode().follow(store);
          events.forEach(([type, r], rv) => {
            store.apply(type, nodeOpOf(r, rv + 1));
          });
          for (const name of NODES) {
            const target = node(name, { pool });
            expect(index.of(target).sort()).toEqual(scanned(store.list(), target));
          }
        },
      ),
    );
  });

  it('selectingOnly: the NodeOps a label change can matter to (those selecting by nodeSelector)', () => {
    fc.assert(
      fc.property(fc.array(nodeOpArb, { maxLength: 12 }), fc.constantFrom('x', 'y'), (ops, pool) => {
        const store = new InformerStore<NodeOp>(silentLogger(), (o) => o);
        const index = new NodeOpsByNode().follow(store);
        ops.forEach((r, rv) => {
          store.apply('ADDED', nodeOpOf(r, rv + 1));
        });
        for (const name of NODES) {
          const target = node(name, { pool });
          const selecting = store.list().filter((op) => !op.spec.targetNodes);
          expect(index.of(target, true).sort()).toEqual(scanned(selecting, target));
        }
      }),
    );
  });

  it('replays what the cache already holds', () => {
    const store = new InformerStore<NodeOp>(silentLogger(), (o) => o);
    store.apply('ADDED', nodeOpOf({ name: 'a', targets: ['n1'], pool: undefined, started: [] }, 1));
    expect(new NodeOpsByNode().follow(store).of(node('n1'))).toEqual(['ns/a']);
  });
});

describe('PodsByJob', () => {
  const pod = (name: string, job: string | undefined, rv: number): V1Pod => ({
    metadata: {
      name,
      namespace: 'ns',
      resourceVersion: String(rv),
      labels: job ? { [KUBERNETES_NAMES.jobNameLabel]: job } : {},
    },
  });

  const events = (job: fc.Arbitrary<string | undefined>) =>
    fc.array(fc.tuple(fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), fc.constantFrom('p1', 'p2', 'p3', 'p4'), job), {
      maxLength: 30,
    });
  const replay = (
    list: [string, string, string | undefined][],
    jobOf: (name: string, job?: string) => string | undefined,
  ) => {
    const store = new InformerStore<V1Pod>(silentLogger(), (o) => o);
    const index = new PodsByJob(store);
    // Every write gets a new resourceVersion, as the API server's do.
    list.forEach(([type, name, job], rv) => {
      store.apply(type, pod(name, jobOf(name, job), rv + 1));
    });
    const scan = (job: string) =>
      store
        .list('ns')
        .filter((p) => p.metadata?.labels?.[KUBERNETES_NAMES.jobNameLabel] === job)
        .map(objectKey);
    return { index, scan };
  };

  it("lists a Job's pods as the scan of the namespace did, in the cache's order", () => {
    // A pod's job-name label never changes: the cache's order is then the index's order.
    const fixed = (name: string) => (name === 'p4' ? undefined : name < 'p3' ? 'j1' : 'j2');
    fc.assert(
      fc.property(events(fc.constant(undefined)), (list) => {
        const { index, scan } = replay(list, fixed);
        for (const job of ['j1', 'j2', 'j3']) expect(index.of('ns', job).map(objectKey)).toEqual(scan(job));
        expect(index.of('other', 'j1')).toEqual([]);
      }),
    );
  });

  it('follows a pod whose job-name label changes (the same pods; the order may differ)', () => {
    fc.assert(
      fc.property(events(fc.constantFrom('j1', 'j2', undefined)), (list) => {
        const { index, scan } = replay(list, (_name, job) => job);
        for (const job of ['j1', 'j2']) expect(index.of('ns', job).map(objectKey).sort()).toEqual(scan(job).sort());
      }),
    );
  });
});

describe('targetNodesOf', () => {
  const nodes = [
    node('b', { pool: 'x' }),
    node('z-master', { 'node-role.kubernetes.io/master': '' }),
    node('a', { pool: 'x' }),
    node('y-cp', { pool: 'x', 'node-role.kubernetes.io/control-plane': 'true' }),
  ];
  const byName = new Map(nodes.map((n) => [n.metadata?.name ?? '', n]));
  let listed = 0;
  const cache = {
    get: (name: string) => byName.get(name),
    list: () => {
      listed++;
      return nodes;
    },
  };

  it('looks an explicit list up by name (no scan) and orders it as targetNodes does', () => {
    listed = 0;
    for (const spec of [{ targetNodes: ['b', 'gone', 'y-cp', 'b'] }, { targetNodes: [] }, { targetNodes: ['a'] }])
      expect(targetNodesOf(spec, cache)).toEqual(targetNodes(spec, nodes));
    expect(listed).toBe(0);
  });

  it('scans for a selector', () => {
    const spec = { nodeSelector: { matchLabels: { pool: 'x' } } };
    expect(targetNodesOf(spec, cache)).toEqual(['y-cp', 'a', 'b']);
    expect(targetNodesOf({}, cache)).toEqual(targetNodes({}, nodes));
  });
});
