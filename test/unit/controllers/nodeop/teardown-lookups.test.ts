/**
 * A deleted NodeOp's teardown looks its Jobs, pods and cordoned nodes up through indexes
 * (cache-indexes.ts) instead of scanning every cached Job, pod and node: on random caches kept up
 * to date through adds, updates and deletes, the lookups find exactly what the scans found.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Job, V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { KUBERNETES_NAMES, NODEOP_NAMES } from '../../../../src/api/names.js';
import type { NodeOp } from '../../../../src/api/nodeop.js';
import {
  addNodeOpIndexes,
  NODES_BY_CORDON_OWNER,
  PodsByJob,
} from '../../../../src/controllers/nodeop/cache-indexes.js';
import { nodeOpWork } from '../../../../src/controllers/nodeop/teardown.js';
import { cordonedBy } from '../../../../src/jobs/cordon/claims.js';
import { objectKey } from '../../../../src/kube/informer.js';
import { InformerStore } from '../../../../src/kube/informer-store.js';
import { silentLogger } from '../../../../src/kube/logger.js';

const EVENT = fc.constantFrom('ADDED', 'MODIFIED', 'DELETED');
const NAMESPACE = fc.constantFrom('ns', 'other');
const UID = fc.constantFrom('u1', 'u2', 'u3');

const jobArb = fc.record({ type: EVENT, name: fc.constantFrom('j1', 'j2', 'j3'), ns: NAMESPACE, owner: UID });
const podArb = fc.record({
  type: EVENT,
  name: fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p5'),
  ns: NAMESPACE,
  job: fc.option(fc.constantFrom('j1', 'j2', 'j3'), { nil: undefined }),
  nodeOp: fc.constantFrom('op-a', 'op-b'),
  owner: fc.option(UID, { nil: undefined }),
  phase: fc.constantFrom('Pending', 'Running', 'Succeeded', 'Failed'),
});
const nodeArb = fc.record({
  type: EVENT,
  name: fc.constantFrom('n1', 'n2', 'n3'),
  owner: fc.option(fc.constantFrom('ns/op-a@u1', 'ns/op-b@u2'), { nil: undefined }),
});

function job(r: typeof jobArb extends fc.Arbitrary<infer T> ? T : never, rv: number): V1Job {
  return {
    metadata: {
      name: r.name,
      namespace: r.ns,
      resourceVersion: String(rv),
      ownerReferences: [{ apiVersion: 'v1', kind: 'NodeOp', name: 'x', uid: r.owner }],
    },
  };
}

function pod(r: typeof podArb extends fc.Arbitrary<infer T> ? T : never, rv: number): V1Pod {
  return {
    metadata: {
      name: r.name,
      namespace: r.ns,
      resourceVersion: String(rv),
      labels: {
        [NODEOP_NAMES.nodeOpLabel]: r.nodeOp,
        ...(r.job ? { [KUBERNETES_NAMES.jobNameLabel]: r.job } : {}),
      },
      ...(r.owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'NodeOp', name: r.nodeOp, uid: r.owner }] } : {}),
    },
    status: { phase: r.phase },
  };
}

/** What stopNodeOpWork scanned for before the indexes. */
function scanned(jobs: V1Job[], pods: V1Pod[], namespace: string, name: string, uid: string) {
  const owned = jobs.filter(
    (j) => j.metadata?.namespace === namespace && j.metadata.ownerReferences?.some((ref) => ref.uid === uid),
  );
  const jobNames = new Set(owned.map((j) => j.metadata?.name ?? ''));
  const ours = pods.filter((p) => {
    if (p.metadata?.namespace !== namespace) return false;
    const labels = p.metadata.labels ?? {};
    const mine =
      jobNames.has(labels[KUBERNETES_NAMES.jobNameLabel] ?? '') ||
      (labels[NODEOP_NAMES.nodeOpLabel] === name && p.metadata.ownerReferences?.some((ref) => ref.uid === uid));
    return mine && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
  });
  return { jobs: owned.map(objectKey).sort(), pods: ours.map(objectKey).sort() };
}

describe('teardown lookups', () => {
  it("find a deleted NodeOp's Jobs, unfinished pods and cordoned nodes as the scans did", () => {
    fc.assert(
      fc.property(
        fc.array(jobArb, { maxLength: 12 }),
        fc.array(podArb, { maxLength: 20 }),
        fc.array(nodeArb, { maxLength: 8 }),
        (jobEvents, podEvents, nodeEvents) => {
          const jobs = new InformerStore<V1Job>(silentLogger(), (o) => o);
          const pods = new InformerStore<V1Pod>(silentLogger(), (o) => o);
          const nodes = new InformerStore<V1Node>(silentLogger(), (o) => o);
          const podsByJob = new PodsByJob(pods);
          // Half the objects before the indexes are added: those already cached are filed then.
          let rv = 0;
          const half = <T>(list: T[], first: boolean): T[] =>
            list.slice(first ? 0 : list.length >> 1, first ? list.length >> 1 : undefined);
          const feed = (first: boolean): void => {
            for (const r of half(jobEvents, first)) jobs.apply(r.type, job(r, ++rv));
            for (const r of half(podEvents, first)) pods.apply(r.type, pod(r, ++rv));
            for (const r of half(nodeEvents, first))
              nodes.apply(r.type, {
                metadata: {
                  name: r.name,
                  resourceVersion: String(++rv),
                  annotations: r.owner ? { [NODEOP_NAMES.cordonedBy]: r.owner } : {},
                },
              });
          };
          feed(true);
          addNodeOpIndexes({ jobs, pods, nodes });
          feed(false);
          const lookups = { jobs, pods, podsOfJob: (ns: string, name: string) => podsByJob.of(ns, name) };
          for (const namespace of ['ns', 'other'])
            for (const [name, uid] of [
              ['op-a', 'u1'],
              ['op-b', 'u2'],
              ['op-a', 'u3'],
            ] as const) {
              const nodeOp = { metadata: { name, namespace, uid } } as NodeOp;
              const found = nodeOpWork(lookups, { nodeOp, namespace });
              expect({ jobs: found.jobs.map(objectKey).sort(), pods: found.pods.map(objectKey).sort() }).toEqual(
                scanned(jobs.list(), pods.list(), namespace, name, uid),
              );
            }
          for (const owner of ['ns/op-a@u1', 'ns/op-b@u2', 'ns/none@u9'])
            expect(nodes.byIndex(NODES_BY_CORDON_OWNER, owner).map(objectKey).sort()).toEqual(
              nodes
                .list()
                .filter((n) => cordonedBy(n) === owner)
                .map(objectKey)
                .sort(),
            );
        },
      ),
      { numRuns: 300 },
    );
  });
});
