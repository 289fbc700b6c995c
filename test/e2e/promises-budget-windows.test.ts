/**
 * A DisruptionBudget's maintenance windows bind every actor that would newly disrupt a node it
 * covers, and a NodeOp's reboot counts against the budget whether or not it cordons. Through the
 * real operator (Skyhook, NodeOp and maintenance controllers) and the simulated host, no wall-clock
 * race: the budget is created with a window that is closed (a cron opening once a year, on
 * 1 January), each actor is seen waiting with `OutsideMaintenanceWindow` and the next opening in its
 * own status while a node watch sees nothing cordoned or marked; then the window is patched open
 * and all three finish.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import type { NodeOp } from '../../src/api/nodeop.js';
import { API_GROUP, API_VERSION, KINDS, nodeAnnotations, NODEOP_NAMES } from '../../src/api/names.js';
import { nodeOpControllerFactory } from '../../src/controllers/nodeop/controller.js';
import { skyhookControllerFactory } from '../../src/controllers/skyhook/skyhook-controller.js';
import { cordonViewOf, isDisrupted } from '../../src/jobs/cordon/claims.js';
import { mergePatchCustomObject } from '../../src/kube/client.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { waitForList } from '../../src/kube/wait.js';
import {
  applyPolicy,
  requestMaintenance,
  runScripts,
  startDaemons,
  startMaintenanceHarness,
  waitForPolicy,
  type MaintenanceHarness,
} from './maintenance-harness.js';
import { NAMESPACE, waitForSkyhook } from './skyhook-cluster.js';

const NODES = ['win-0', 'win-1', 'win-2', 'win-3', 'win-4'];
const LABELS = { 'promises-e2e': 'windows' };
/** The operator's namespace: the only one whose NodeOps it runs by default. */
const NS = NAMESPACE;
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
/** Open one minute a year: closed whenever this test runs (it refuses to run on 1 January). */
const CLOSED = [{ schedule: '0 0 1 1 *', duration: '1m' }];
/** Opens every minute for an hour: always open. */
const OPEN = [{ schedule: '* * * * *', duration: '1h' }];
const nextNewYear = (): string => `${new Date().getUTCFullYear() + 1}-01-01T00:00:00Z`;

let h: MaintenanceHarness;
const budgetRef = (name: string) => ({
  group: API_GROUP,
  version: API_VERSION,
  plural: KINDS.disruptionBudget.plural,
  name,
});

beforeAll(async () => {
  h = await startMaintenanceHarness(
    NODES.map((name) => ({ name, labels: LABELS })),
    { extraControllers: [nodeOpControllerFactory(), skyhookControllerFactory()], simulatedHost: {} },
  );
  await startDaemons(h, ['win-2']);
}, 180_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

async function createBudget(name: string, spec: object): Promise<void> {
  await h.custom.createClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.disruptionBudget.plural,
    body: { apiVersion: `${API_GROUP}/${API_VERSION}`, kind: KINDS.disruptionBudget.kind, metadata: { name }, spec },
  });
}

async function createNodeOp(name: string, spec: object): Promise<void> {
  await h.custom.createNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.nodeOp.plural,
    namespace: NS,
    body: {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind: KINDS.nodeOp.kind,
      metadata: { name, namespace: NS },
      spec,
    },
  });
}

async function createSkyhook(name: string, node: string): Promise<void> {
  await h.custom.createClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.skyhook.plural,
    body: {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind: KINDS.skyhook.kind,
      metadata: { name },
      spec: {
        nodeSelectors: { matchLabels: { 'kubernetes.io/hostname': node } },
        packages: { kernel: { version: '1.0.0', image: IMAGE, interrupt: { type: 'reboot' } } },
      },
    },
  });
}

function waitForNodeOp(name: string, done: (op: NodeOp) => boolean, timeoutMs = 90_000): Promise<NodeOp> {
  return waitForList<NodeOp>(
    h.cp.kubeConfig,
    `/apis/${API_GROUP}/${API_VERSION}/namespaces/${NS}/nodeops`,
    (all) => all.some((op) => op.metadata.name === name && done(op)),
    timeoutMs,
    `NodeOp ${name}`,
  ).then((all) => all.find((op) => op.metadata.name === name)!);
}

/** Every moment a watched node was disrupted (cordoned by an actor, or marked rebooting), per node. */
async function watchDisruptions(nodes: string[]) {
  const informer = new Informer<V1Node>(apiListWatch(h.cp.kubeConfig, '/api/v1/nodes'), {
    resource: 'disrupted',
    logger: silentLogger(),
  });
  const firstDisrupted = new Map<string, number>();
  let most = 0;
  const seen = (): void => {
    const now = informer.list().filter((n) => nodes.includes(n.metadata?.name ?? '') && isDisrupted(cordonViewOf(n)));
    for (const node of now)
      if (!firstDisrupted.has(node.metadata!.name!)) firstDisrupted.set(node.metadata!.name!, Date.now());
    most = Math.max(most, now.length);
  };
  informer.on({ add: seen, update: seen, delete: seen });
  informer.start();
  await informer.waitForSync(30_000);
  return { firstDisrupted, most: () => most, stop: () => informer.stop() };
}

describe('a DisruptionBudget maintenance window', () => {
  it('holds a Skyhook interrupt, a cordoning and rebooting NodeOp and a maintenance slot until it opens; then all finish', async () => {
    if (new Date().getUTCMonth() === 0 && new Date().getUTCDate() === 1) throw new Error('not on 1 January');
    const watched = ['win-0', 'win-1', 'win-2'];
    const disruptions = await watchDisruptions(watched);
    await createBudget('weekend', {
      nodeSelector: { matchLabels: LABELS },
      maxDisrupted: { count: 3 },
      maintenanceWindows: CLOSED,
    });
    const scripts = runScripts(h, ['win-2'], { durationMs: 500 });
    await applyPolicy(h, 'slots', {
      nodeSelector: { matchLabels: { 'kubernetes.io/hostname': 'win-2' } },
      maxConcurrent: 1,
    });
    await createSkyhook('kernel', 'win-0');
    await createNodeOp('upgrade', {
      targetNodes: ['win-1'],
      image: 'busybox:1.37',
      command: ['/bin/sh', '-c', 'true'],
      cordon: true,
      rebootOnSuccess: true,
    });
    requestMaintenance(h, 'win-2');

    // Each actor waits, saying why and when the window opens, in its own status.
    const opening = nextNewYear();
    const scr = await waitForSkyhook(h, 'kernel', (s) =>
      (s.status?.conditions ?? []).some((c) => c.reason === 'OutsideMaintenanceWindow'),
    );
    expect(scr.status?.nextMaintenanceWindow).toBe(opening);
    const op = await waitForNodeOp('upgrade', (o) =>
      (o.status?.nodeStatuses?.['win-1']?.message ?? '').includes('OutsideMaintenanceWindow'),
    );
    expect(op.status?.nodeStatuses?.['win-1']).toMatchObject({ phase: 'Pending' });
    expect(op.status?.nodeStatuses?.['win-1']?.message).toContain(`next opens ${opening}`);
    const policy = await waitForPolicy(h, 'slots', (p) =>
      (p.status?.queue ?? []).some((q) => q.node === 'win-2' && q.reason === 'OutsideMaintenanceWindow'),
    );
    expect(policy.status?.queue?.find((q) => q.node === 'win-2')?.message).toContain(`next opens ${opening}`);
    const node0 = await h.core.readNode({ name: 'win-0' });
    expect(node0.metadata?.annotations?.[nodeAnnotations.waiting('kernel')]).toMatch(/^OutsideMaintenanceWindow: /);
    // Nothing disrupted any of them while the window was closed.
    expect([...disruptions.firstDisrupted.keys()]).toEqual([]);

    // Open it: every actor proceeds and finishes.
    const openedAt = Date.now();
    await mergePatchCustomObject(h.custom, budgetRef('weekend'), { spec: { maintenanceWindows: OPEN } });
    await waitForSkyhook(h, 'kernel', (s) => s.status?.status === 'complete', 120_000);
    await waitForNodeOp('upgrade', (o) => o.status?.phase === 'Completed', 120_000);
    await waitForPolicy(
      h,
      'slots',
      (p) => (p.status?.recentCompletions ?? []).some((c) => c.node === 'win-2') && p.status?.holderCount === 0,
      120_000,
    );
    scripts.stop();
    await disruptions.stop();
    expect([...disruptions.firstDisrupted.keys()].sort()).toEqual(watched);
    for (const at of disruptions.firstDisrupted.values()) expect(at).toBeGreaterThanOrEqual(openedAt);
  }, 300_000);
});

describe('a NodeOp rebooting without a cordon', () => {
  it('counts against the budget covering its node: a Skyhook reboot on another covered node waits for it', async () => {
    const pair = ['win-3', 'win-4'];
    const disruptions = await watchDisruptions(pair);
    await createBudget('one-at-a-time', {
      nodeSelector: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: pair }] },
      maxDisrupted: { count: 1 },
    });
    // A slow Job, so the Skyhook asks while the NodeOp's node is disrupted.
    await createNodeOp('reboot-only', {
      targetNodes: ['win-3'],
      image: 'busybox:1.37',
      command: ['/bin/sh', '-c', 'true'],
      rebootOnSuccess: true,
      env: [{ name: 'SKYHOOK_SIM_DURATION', value: '5s' }],
    });
    await waitForList<V1Node>(
      h.cp.kubeConfig,
      '/api/v1/nodes',
      (all) => all.some((n) => n.metadata?.name === 'win-3' && n.metadata.annotations?.[NODEOP_NAMES.rebootingBy]),
      60_000,
      'win-3 marked rebooting',
    );
    await createSkyhook('second', 'win-4');
    await waitForNodeOp('reboot-only', (o) => o.status?.phase === 'Completed', 120_000);
    await waitForSkyhook(h, 'second', (s) => s.status?.status === 'complete', 120_000);
    await disruptions.stop();
    const node = await h.core.readNode({ name: 'win-3' });
    expect(node.metadata?.annotations?.[NODEOP_NAMES.rebootingBy]).toBeUndefined();
    expect(node.spec?.unschedulable).not.toBe(true);
    expect([...disruptions.firstDisrupted.keys()].sort()).toEqual(pair);
    expect(disruptions.most()).toBe(1);
  }, 300_000);
});
