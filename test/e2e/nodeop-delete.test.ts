/**
 * A NodeOp deleted while its Job runs stops that Job before it goes: the Job and its pods are
 * deleted, and the NodeOp (held by its finalizer) disappears only once no pod of it is left
 * unfinished. Otherwise a NodeOp created again under the same name (as the Skyhook controller
 * does for a stage) would run beside a pod of the old one (found by the chaos suite).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, NODEOP_NAMES } from '../../src/api/names.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { SIM_ENV } from '../../src/sandbox/kwok-stages.js';
import { eventually } from './eventually.js';
import {
  createNamespace,
  createNodeOp,
  startNodeOpHarness,
  waitForNodeOp,
  type NodeOpHarness,
} from './nodeop-harness.js';

let h: NodeOpHarness;

beforeAll(async () => {
  h = await startNodeOpHarness([{ name: 'd-1' }]);
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

describe('a NodeOp deleted mid-Job', () => {
  it('deletes its Job and goes only once none of its pods runs any more', async () => {
    const ns = 'deleting';
    await createNamespace(h, ns);
    // Watch the pods and the NodeOp: when the NodeOp is gone, which of its pods still ran?
    const pods = new Informer<V1Pod>(apiListWatch(h.cp.kubeConfig, `/api/v1/namespaces/${ns}/pods`), {
      resource: 'pods',
      logger: silentLogger(),
    });
    const ops = new Informer<KubernetesObject>(
      apiListWatch(h.cp.kubeConfig, `/apis/${API_GROUP}/${API_VERSION}/namespaces/${ns}/nodeops`),
      { resource: 'nodeops', logger: silentLogger() },
    );
    // Judged by etcd revision, not by what the pods watch had delivered when the NodeOps watch showed
    // the deletion: two watches, and the pods one may be a moment behind (the operator lets the NodeOp
    // go a write or two after its own cache showed the last pod gone).
    const revision = (o: KubernetesObject): bigint => BigInt(o.metadata?.resourceVersion ?? '0');
    /** Each pod of the NodeOp: the revision it was first seen at, and the one it was first seen ended at (finished or deleted). */
    const podRevisions = new Map<string, { seen: bigint; ended?: bigint; how?: string }>();
    const notePod = (pod: V1Pod, deleted: boolean): void => {
      if (pod.metadata?.labels?.[NODEOP_NAMES.nodeOpLabel] !== 'slow') return;
      const entry = podRevisions.get(pod.metadata?.name ?? '') ?? { seen: revision(pod) };
      if (entry.ended === undefined && (deleted || ['Succeeded', 'Failed'].includes(pod.status?.phase ?? ''))) {
        entry.ended = revision(pod);
        entry.how = deleted ? 'deleted' : (pod.status?.phase ?? '');
      }
      podRevisions.set(pod.metadata?.name ?? '', entry);
    };
    pods.on({ add: (p) => notePod(p, false), update: (p) => notePod(p, false), delete: (p) => notePod(p, true) });
    /** The pods that existed and had not ended at `at`. */
    const runningAt = (at: bigint): string[] =>
      [...podRevisions]
        .filter(([, { seen, ended }]) => seen <= at && (ended === undefined || ended > at))
        .map(([name]) => name);
    let goneAt: bigint | undefined;
    ops.on({
      delete: (op) => {
        goneAt ??= revision(op);
      },
    });
    pods.start();
    ops.start();
    await Promise.all([pods.waitForSync(30_000), ops.waitForSync(30_000)]);
    try {
      await createNodeOp(h, ns, 'slow', {
        targetNodes: ['d-1'],
        image: 'busybox:1.37',
        command: ['/bin/true'],
        cordon: true,
        env: [{ name: SIM_ENV.duration, value: '20s' }],
      });
      await waitForNodeOp(h, ns, 'slow', (op) => op.status?.nodeStatuses?.['d-1']?.phase === 'Running');
      await h.custom.deleteNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        plural: 'nodeops',
        namespace: ns,
        name: 'slow',
      });
      for (let i = 0; i < 300 && goneAt === undefined; i++) await new Promise((r) => setTimeout(r, 100));
      expect(goneAt).toBeDefined();
      // Once the pods watch has shown every pod's end (a pod still running shows none, and stays listed).
      const runningWhenGone = await eventually(
        async () => runningAt(goneAt!),
        () => [...podRevisions.values()].every((pod) => pod.ended !== undefined),
      );
      expect(runningWhenGone).toEqual([]);
      // The deletion ended the pods: none ran its 20 s to completion by itself.
      expect(podRevisions.size).toBeGreaterThan(0);
      expect([...podRevisions.values()].filter((pod) => pod.how === 'Succeeded')).toEqual([]);
      expect(
        (await h.batch.listNamespacedJob({ namespace: ns })).items.filter((j) => !j.metadata?.deletionTimestamp),
      ).toEqual([]);
      expect((await h.core.readNode({ name: 'd-1' })).spec?.unschedulable).toBeFalsy();
    } finally {
      await Promise.all([pods.stop(), ops.stop()]);
    }
  }, 90_000);
});
