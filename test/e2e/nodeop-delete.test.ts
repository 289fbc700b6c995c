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
    let runningWhenGone: string[] | undefined;
    ops.on({
      delete: () => {
        runningWhenGone = pods
          .list()
          .filter(
            (p) =>
              p.metadata?.labels?.[NODEOP_NAMES.nodeOpLabel] === 'slow' &&
              !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''),
          )
          .map((p) => p.metadata?.name ?? '');
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
      const deletedAt = Date.now();
      await h.custom.deleteNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        plural: 'nodeops',
        namespace: ns,
        name: 'slow',
      });
      for (let i = 0; i < 300 && runningWhenGone === undefined; i++) await new Promise((r) => setTimeout(r, 100));
      expect(runningWhenGone).toEqual([]);
      // Well before the 20 s pod would have ended by itself.
      expect(Date.now() - deletedAt).toBeLessThan(15_000);
      expect(
        (await h.batch.listNamespacedJob({ namespace: ns })).items.filter((j) => !j.metadata?.deletionTimestamp),
      ).toEqual([]);
      expect((await h.core.readNode({ name: 'd-1' })).spec?.unschedulable).toBeFalsy();
    } finally {
      await Promise.all([pods.stop(), ops.stop()]);
    }
  }, 90_000);
});
