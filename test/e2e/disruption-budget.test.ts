/**
 * The cluster-wide DisruptionBudget through the real operator and the simulated host (#16's
 * acceptance): two Skyhooks with reboot interrupts and `interruptionBudget.count: 1` each, on 6
 * nodes. With a DisruptionBudget of 1 a watcher for the whole test never sees 2 nodes disrupted at
 * once (isDisrupted: cordoned under one of our claims), a waiting node says ClusterBudget, the
 * budget's status shows who waits, and both complete. A NodeOp that would cordon a node the budget
 * has no room for waits Pending and runs once a slot frees. Without it they behave as today: 2 at once.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import type { NodeOp } from '../../src/api/nodeop.js';
import type { DisruptionBudget } from '../../src/api/disruption-budget.js';
import { API_GROUP, API_VERSION, KINDS, NODE_ANNOTATION_PREFIXES } from '../../src/api/names.js';
import { nameOf } from '../../src/api/object-meta.js';
import { disruptionBudgetControllerFactory } from '../../src/controllers/disruption/budget-controller.js';
import { cordonViewOf, isDisrupted } from '../../src/jobs/cordon/claims.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { waitForList } from '../../src/kube/wait.js';
import { eventually, waitForValue } from './eventually.js';
import {
  createGroupSkyhook,
  GROUP_LABEL,
  groupNodes,
  NAMESPACE,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';

const NODES = 6;
let h: SkyhookHarness;

beforeAll(async () => {
  h = await startSkyhookHarness([...groupNodes('budget', NODES), ...groupNodes('free', NODES)], {
    simulatedHost: {},
    extraControllers: [disruptionBudgetControllerFactory()],
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

interface DisruptionWatch {
  max(): number;
  /** Every distinct `<scr>: <waiting reason>` seen starting with ClusterBudget. */
  clusterBudgetWaits: Set<string>;
  stop(): Promise<void>;
}

/** Watches the group's nodes for the whole test: the most disrupted at once, and the ClusterBudget waits. */
async function watchDisruption(group: string): Promise<DisruptionWatch> {
  const informer = new Informer<V1Node>(apiListWatch(h.cp.kubeConfig, '/api/v1/nodes'), {
    resource: `disruption-${group}`,
    logger: silentLogger(),
  });
  const disrupted = new Set<string>();
  const clusterBudgetWaits = new Set<string>();
  let max = 0;
  const seen = (node: V1Node): void => {
    if (node.metadata?.labels?.[GROUP_LABEL] !== group) return;
    if (isDisrupted(cordonViewOf(node))) disrupted.add(nameOf(node));
    else disrupted.delete(nameOf(node));
    max = Math.max(max, disrupted.size);
    for (const [key, value] of Object.entries(node.metadata?.annotations ?? {}))
      if (key.startsWith(NODE_ANNOTATION_PREFIXES.waiting) && value.startsWith('ClusterBudget: '))
        clusterBudgetWaits.add(`${key.slice(NODE_ANNOTATION_PREFIXES.waiting.length)}: ${value.split(';')[0]}`);
  };
  informer.on({ add: seen, update: seen });
  informer.start();
  await informer.waitForSync(30_000);
  return { max: () => max, clusterBudgetWaits, stop: () => informer.stop() };
}

const rebootPackages = {
  kernel: {
    version: '1.0.0',
    image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
    interrupt: { type: 'reboot' as const },
  },
};

async function twoRebootingSkyhooks(group: string): Promise<void> {
  for (const name of [`${group}-first`, `${group}-second`])
    await createGroupSkyhook(h, name, group, { interruptionBudget: { count: 1 }, packages: rebootPackages });
}

async function bothComplete(group: string): Promise<void> {
  for (const name of [`${group}-first`, `${group}-second`]) {
    const done = await waitForSkyhook(h, name, (scr) => scr.status?.status === 'complete', 400_000);
    expect(done.status?.completeNodes).toBe(`${NODES}/${NODES}`);
  }
}

async function getBudget(name: string): Promise<DisruptionBudget> {
  return (await h.custom.getClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.disruptionBudget.plural,
    name,
  })) as DisruptionBudget;
}

describe('two Skyhooks with reboots and interruptionBudget.count 1 each, on 6 nodes', () => {
  it('with a DisruptionBudget of 1: never 2 nodes disrupted at once, the wait is visible, both complete', async () => {
    await h.custom.createClusterCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: KINDS.disruptionBudget.plural,
      body: {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: KINDS.disruptionBudget.kind,
        metadata: { name: 'one-at-a-time' },
        spec: { nodeSelector: { matchLabels: { [GROUP_LABEL]: 'budget' } }, maxDisrupted: { count: 1 } },
      },
    });
    const watch = await watchDisruption('budget');
    // Every waiting entry the budget's status ever shows, from a watch: an entry that stands only
    // between two writes cannot fall between two polls.
    const waited = new Set<string>();
    const budgets = new Informer<DisruptionBudget>(
      apiListWatch(h.cp.kubeConfig, `/apis/${API_GROUP}/${API_VERSION}/${KINDS.disruptionBudget.plural}`),
      { resource: 'disruption-budgets', logger: silentLogger() },
    );
    const noteWaiting = (budget: DisruptionBudget): void => {
      if (nameOf(budget) !== 'one-at-a-time') return;
      for (const wait of budget.status?.waiting ?? []) waited.add(wait.holder);
    };
    budgets.on({ add: noteWaiting, update: noteWaiting });
    budgets.start();
    await budgets.waitForSync(30_000);
    try {
      await twoRebootingSkyhooks('budget');
      await bothComplete('budget');
    } finally {
      await Promise.all([budgets.stop(), watch.stop()]);
    }
    expect(watch.max()).toBe(1);
    expect([...watch.clusterBudgetWaits].some((wait) => wait.includes('DisruptionBudget one-at-a-time allows 1'))).toBe(
      true,
    );
    expect([...waited].some((holder) => holder.startsWith('skyhook/budget-'))).toBe(true);
    // The budget controller writes the status from its own node watch after the last uncordon, which
    // comes before the Skyhook status write waited for: the budget's status may not show it yet.
    const budget = await eventually(
      () => getBudget('one-at-a-time'),
      (b) => b.status?.disruptedCount === 0,
    );
    expect(budget.status).toMatchObject({ matched: NODES, maxDisrupted: 1, disruptedCount: 0 });
  }, 600_000);

  it('a NodeOp that would cordon a node the budget has no room for waits Pending, then runs once a slot frees', async () => {
    const maintenanceClaim = `${NODE_ANNOTATION_PREFIXES.maintenance}e2e`;
    const holdSlot = (held: boolean) =>
      h.core.patchNode(
        {
          name: 'budget-0',
          body: {
            metadata: { annotations: { [maintenanceClaim]: held ? 'true' : null } },
            spec: { unschedulable: held },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    await holdSlot(true);
    await h.custom.createNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: KINDS.nodeOp.plural,
      namespace: NAMESPACE,
      body: {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: KINDS.nodeOp.kind,
        metadata: { name: 'needs-a-slot', namespace: NAMESPACE },
        spec: { targetNodes: ['budget-1'], command: ['true'], cordon: true },
      },
    });
    const nodeOps = `/apis/${API_GROUP}/${API_VERSION}/namespaces/${NAMESPACE}/nodeops`;
    const statusOf = (ops: NodeOp[]) =>
      ops.find((op) => nameOf(op) === 'needs-a-slot')?.status?.nodeStatuses?.['budget-1'];
    const waiting = await waitForList<NodeOp>(
      h.cp.kubeConfig,
      nodeOps,
      (ops) => statusOf(ops)?.message?.startsWith('waiting for the cluster disruption budget') === true,
      60_000,
      'NodeOp needs-a-slot waiting for the budget',
    );
    expect(statusOf(waiting)?.phase).toBe('Pending');
    expect(statusOf(waiting)?.message).toContain('DisruptionBudget one-at-a-time allows 1 of 6 node(s)');
    const node = await h.core.readNode({ name: 'budget-1' });
    expect(node.spec?.unschedulable ?? false).toBe(false);
    await waitForValue(
      'DisruptionBudget one-at-a-time to list budget-1 as waiting for NodeOp needs-a-slot',
      async () =>
        ((await getBudget('one-at-a-time')).status?.waiting ?? []).some(
          (wait) => wait.node === 'budget-1' && wait.holder === `nodeop/${NAMESPACE}/needs-a-slot`,
        ) || undefined,
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    await holdSlot(false);
    await waitForList<NodeOp>(
      h.cp.kubeConfig,
      nodeOps,
      (ops) => statusOf(ops)?.phase === 'Completed',
      60_000,
      'NodeOp needs-a-slot completed',
    );
  }, 180_000);

  it('without a budget: as today, the two take down 2 nodes at once, and both complete', async () => {
    const watch = await watchDisruption('free');
    try {
      await twoRebootingSkyhooks('free');
      await bothComplete('free');
    } finally {
      await watch.stop();
    }
    expect(watch.max()).toBe(2);
    expect(watch.clusterBudgetWaits.size).toBe(0);
  }, 600_000);
});
