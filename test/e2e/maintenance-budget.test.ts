/**
 * One DisruptionBudget over Skyhook interrupts and node-initiated maintenance on the same nodes:
 * a Skyhook rebooting every node (its own interruptionBudget allows 3 at once) and every node's
 * daemon asking for a maintenance slot (maxConcurrent 3) never take more than the budget's 2 nodes
 * out of service together, as a watcher of disrupted nodes (claims.ts: isDisrupted) sees it for the
 * whole test; both finish.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, KINDS } from '../../src/api/names.js';
import { nodeOpControllerFactory } from '../../src/controllers/nodeop/controller.js';
import { skyhookControllerFactory } from '../../src/controllers/skyhook/skyhook-controller.js';
import { cordonViewOf, isDisrupted } from '../../src/jobs/cordon/claims.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import {
  applyPolicy,
  requestMaintenance,
  runScripts,
  startDaemons,
  startMaintenanceHarness,
  waitForPolicy,
  type MaintenanceHarness,
} from './maintenance-harness.js';
import { waitForSkyhook } from './skyhook-cluster.js';

const NODES = Array.from({ length: 6 }, (_, i) => `shared-${i}`);
const LABELS = { 'maintenance-e2e': 'shared' };
let h: MaintenanceHarness;

beforeAll(async () => {
  h = await startMaintenanceHarness(
    NODES.map((name) => ({ name, labels: LABELS })),
    {
      extraControllers: [
        nodeOpControllerFactory({ settings: { stuckPodTimeoutMs: 15_000 } }),
        skyhookControllerFactory(),
      ],
      simulatedHost: {},
    },
  );
  await h.custom.createClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.disruptionBudget.plural,
    body: {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind: KINDS.disruptionBudget.kind,
      metadata: { name: 'shared' },
      spec: { nodeSelector: { matchLabels: LABELS }, maxDisrupted: { count: 2 } },
    },
  });
  await applyPolicy(h, 'shared', { nodeSelector: { matchLabels: LABELS }, maxConcurrent: 3 });
  await startDaemons(h, NODES);
}, 180_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

it('Skyhook reboots and maintenance slots together never disrupt more nodes than the shared budget', async () => {
  const informer = new Informer<V1Node>(apiListWatch(h.cp.kubeConfig, '/api/v1/nodes'), {
    resource: 'disrupted',
    logger: silentLogger(),
  });
  let max = 0;
  const seen = (): void => {
    max = Math.max(max, informer.list().filter((n) => isDisrupted(cordonViewOf(n))).length);
  };
  informer.on({ add: seen, update: seen, delete: seen });
  informer.start();
  await informer.waitForSync(30_000);
  const scripts = runScripts(h, NODES, { durationMs: 1_000 });
  await h.custom.createClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.skyhook.plural,
    body: {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind: KINDS.skyhook.kind,
      metadata: { name: 'shared' },
      spec: {
        nodeSelectors: { matchLabels: LABELS },
        interruptionBudget: { count: 3 },
        packages: {
          kernel: {
            version: '1.0.0',
            image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
            interrupt: { type: 'reboot' },
          },
        },
      },
    },
  });
  for (const node of NODES) requestMaintenance(h, node);
  await waitForSkyhook(h, 'shared', (scr) => scr.status?.status === 'complete', 240_000);
  await waitForPolicy(
    h,
    'shared',
    (p) =>
      NODES.every((n) => (p.status?.recentCompletions ?? []).some((c) => c.node === n)) && p.status?.holderCount === 0,
    240_000,
  );
  scripts.stop();
  await informer.stop();
  expect(max).toBeLessThanOrEqual(2);
  expect(max).toBe(2);
}, 300_000);
