/**
 * NodeOp reboots, failures and restarts against the real control plane, with the host side of the
 * reboot simulated (src/sandbox/simulated-host.ts): the reboot pod exists before the Job, acts
 * only after the Job succeeded, the node's bootID changes, the NodeOp completes and uncordons, and
 * the Job is not re-run; a pending reboot holds the concurrency slot; ImagePullBackOff fails its node
 * in bounded time; a Job deleted by someone else fails its node with a message; an operator
 * restarted mid-NodeOp creates no Job twice and completes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Job, V1Node, V1Pod } from '@kubernetes/client-node';
import { KUBERNETES_NAMES, NODEOP_NAMES } from '../../src/api/names.js';
import type { NodeOpSpec } from '../../src/api/nodeop.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { waitForList } from '../../src/kube/wait.js';
import { SIM_ENV } from '../../src/sandbox/kwok-stages.js';
import {
  createNamespace,
  createNodeOp,
  startNodeOpHarness,
  waitForNodeOp,
  watchJobs,
  type NodeOpHarness,
} from './nodeop-harness.js';

let h: NodeOpHarness;

beforeAll(async () => {
  h = await startNodeOpHarness(['r-1', 'r-2', 'r-3', 'r-4', 'r-5', 'r-6', 'r-7'].map((name) => ({ name })));
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const base = (targetNodes: string[], extra: Partial<NodeOpSpec> = {}): NodeOpSpec => ({
  targetNodes,
  image: 'busybox:1.37',
  command: ['/bin/sh', '-c', 'chroot $HOST_DIR apt-get -y upgrade'],
  ...extra,
});

/** Resource versions of first sight per object name, from one watch per path (etcd revisions order creations). */
async function creationOrder(paths: string[]): Promise<{ rv: Map<string, number>; stop: () => Promise<void> }> {
  const rv = new Map<string, number>();
  const informers = paths.map(
    (path) =>
      new Informer<V1Pod | V1Job>(apiListWatch(h.cp.kubeConfig, path), { resource: path, logger: silentLogger() }),
  );
  for (const informer of informers) {
    informer.on({
      add: (o) => {
        if (!rv.has(o.metadata?.name ?? '')) rv.set(o.metadata?.name ?? '', Number(o.metadata?.resourceVersion));
      },
    });
    informer.start();
  }
  await Promise.all(informers.map((i) => i.waitForSync(30_000)));
  return {
    rv,
    stop: async () => {
      await Promise.all(informers.map((i) => i.stop()));
    },
  };
}

describe('reboot after the Job', () => {
  it('creates the reboot pod first, reboots after the Job succeeded, sees the new bootID, completes, uncordons, and never re-runs the Job', async () => {
    const ns = 'reboot';
    await createNamespace(h, ns);
    const order = await creationOrder([`/api/v1/namespaces/${ns}/pods`, `/apis/batch/v1/namespaces/${ns}/jobs`]);
    const jobs = await watchJobs(h, ns);
    const bootBefore = (await h.core.readNode({ name: 'r-1' })).status?.nodeInfo?.bootID;
    const created = await createNodeOp(
      h,
      ns,
      'upgrade',
      base(['r-1', 'r-2'], { cordon: true, rebootOnSuccess: true, concurrency: 1 }),
    );

    const pending = await waitForNodeOp(
      h,
      ns,
      'upgrade',
      (op) =>
        op.status?.nodeStatuses?.['r-1']?.rebootStatus === 'pending' &&
        op.status.nodeStatuses['r-1'].phase === 'Completed',
    );
    expect(pending.status?.phase).toBe('Running');
    const done = await waitForNodeOp(h, ns, 'upgrade', (op) => op.status?.phase === 'Completed');
    await Promise.all([order.stop(), jobs.stop()]);

    const r1 = done.status?.nodeStatuses?.['r-1'];
    expect(r1).toMatchObject({ phase: 'Completed', rebootStatus: 'completed', bootID: bootBefore });
    const jobName = r1?.jobName ?? '';
    // The reboot pod came first, so a drain would already skip it.
    expect(order.rv.get(`${jobName}-reboot`)).toBeLessThan(order.rv.get(jobName)!);

    // The simulated host acted on r-1's sentinel with the configured command, and the node came back with a new boot.
    const interrupt = h.host.interrupts.find((i) => i.node === 'r-1');
    expect(interrupt).toMatchObject({
      job: jobName,
      commands: [['reboot']],
      rebootsNode: true,
      bootIdBefore: bootBefore,
    });
    const node = await h.core.readNode({ name: 'r-1' });
    expect(node.status?.nodeInfo?.bootID).toBe(interrupt?.bootIdAfter);
    expect(node.status?.nodeInfo?.bootID).not.toBe(bootBefore);
    expect(node.spec?.unschedulable).toBeFalsy();
    expect(node.metadata?.annotations?.[NODEOP_NAMES.cordonedBy]).toBeUndefined();

    // The Job ran once: one Job object, one pod, one success; its pod ran the operation in init containers, then the sentinel.
    expect(jobs.uidsByName.get(jobName)?.size).toBe(1);
    const job = await h.batch.readNamespacedJob({ name: jobName, namespace: ns });
    expect(job.status?.succeeded).toBe(1);
    expect(job.status?.failed ?? 0).toBe(0);
    const jobPods = (
      await h.core.listNamespacedPod({ namespace: ns, labelSelector: `${KUBERNETES_NAMES.jobNameLabel}=${jobName}` })
    ).items;
    expect(jobPods).toHaveLength(1);
    expect(jobPods[0]?.status?.initContainerStatuses?.map((s) => [s.name, s.state?.terminated?.exitCode])).toEqual([
      ['nodeop', 0],
    ]);
    expect(jobPods[0]?.status?.containerStatuses?.map((s) => [s.name, s.state?.terminated?.exitCode])).toEqual([
      ['sentinel-creator', 0],
    ]);

    // The reboot pod restarted once (the reboot) and then exited 0.
    const rebootPod = await h.core.readNamespacedPod({ name: `${jobName}-reboot`, namespace: ns });
    expect(rebootPod.status?.phase).toBe('Succeeded');
    expect(rebootPod.status?.containerStatuses?.[0]?.restartCount).toBe(1);
    expect(rebootPod.spec?.containers[0]?.command?.join(' ')).toContain('nsenter -t 1');
    expect(rebootPod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'NodeOp', uid: created.metadata.uid });

    // concurrency 1: r-2's Job was created only after r-1's reboot had completed.
    expect(jobs.nodesInOrder).toEqual(['r-1', 'r-2']);
    const r2Job = done.status?.nodeStatuses?.['r-2']?.jobName ?? '';
    expect(jobs.firstSeenAt.get(r2Job)).toBeGreaterThan(interrupt!.at);
  });
});

describe('failures', () => {
  it('fails a node whose image cannot be pulled, with the reason', async () => {
    const ns = 'pull';
    await createNamespace(h, ns);
    await createNodeOp(h, ns, 'bad-image', base(['r-6'], { image: 'registry.invalid/missing:1.0' }));
    const failed = await waitForNodeOp(h, ns, 'bad-image', (op) => op.status?.phase === 'Failed', 120_000);
    expect(failed.status?.nodeStatuses?.['r-6']?.message).toMatch(/ImagePullBackOff/);
    expect(failed.status?.nodeStatuses?.['r-6']?.message).toContain('registry.invalid/missing:1.0');
    // The Job is ended rather than left pending forever.
    const jobName = failed.status?.nodeStatuses?.['r-6']?.jobName ?? '';
    await waitForList<V1Job>(
      h.cp.kubeConfig,
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      (js) =>
        js.some(
          (j) =>
            j.metadata?.name === jobName &&
            j.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True'),
        ),
      30_000,
      'Job ended',
    );
  }, 150_000);

  it('notices a Job deleted by someone else and fails the node saying so', async () => {
    const ns = 'deleted';
    await createNamespace(h, ns);
    await createNodeOp(h, ns, 'op', base(['r-7'], { env: [{ name: SIM_ENV.duration, value: '30s' }] }));
    const running = await waitForNodeOp(h, ns, 'op', (op) => op.status?.nodeStatuses?.['r-7']?.phase === 'Running');
    const jobName = running.status?.nodeStatuses?.['r-7']?.jobName ?? '';
    await h.batch.deleteNamespacedJob({ name: jobName, namespace: ns, propagationPolicy: 'Background' });
    const failed = await waitForNodeOp(h, ns, 'op', (op) => op.status?.phase === 'Failed');
    expect(failed.status?.nodeStatuses?.['r-7']?.message).toMatch(
      new RegExp(`Job ${jobName} was deleted before it finished`),
    );
  });
});

describe('operator restart', () => {
  it('creates no Job twice and completes when the operator restarts in the middle of a NodeOp', async () => {
    const ns = 'restart';
    await createNamespace(h, ns);
    const jobs = await watchJobs(h, ns);
    await createNodeOp(
      h,
      ns,
      'rolling',
      base(['r-3', 'r-4', 'r-5'], { concurrency: 1, cordon: true, env: [{ name: SIM_ENV.duration, value: '1s' }] }),
    );

    // Restart while the first node's Job runs, and again while the second node's runs.
    await waitForNodeOp(h, ns, 'rolling', (op) => op.status?.nodeStatuses?.['r-3']?.phase === 'Running');
    await h.restartOperator();
    await waitForNodeOp(
      h,
      ns,
      'rolling',
      (op) =>
        op.status?.nodeStatuses?.['r-4']?.phase === 'Pending' || op.status?.nodeStatuses?.['r-4']?.phase === 'Running',
    );
    await h.restartOperator();
    const done = await waitForNodeOp(h, ns, 'rolling', (op) => op.status?.phase === 'Completed');
    await jobs.stop();

    expect(jobs.nodesInOrder).toEqual(['r-3', 'r-4', 'r-5']);
    expect([...jobs.uidsByName.values()].map((uids) => uids.size)).toEqual([1, 1, 1]);
    expect(jobs.maxInFlight).toBe(1);
    for (const node of ['r-3', 'r-4', 'r-5']) expect(done.status?.nodeStatuses?.[node]?.phase).toBe('Completed');
    const nodes = await waitForList<V1Node>(
      h.cp.kubeConfig,
      '/api/v1/nodes',
      (ns) =>
        ns.filter((n) => ['r-3', 'r-4', 'r-5'].includes(n.metadata?.name ?? '')).every((n) => !n.spec?.unschedulable),
      10_000,
      'uncordoned',
    );
    expect(
      nodes.filter((n) => n.metadata?.annotations?.[NODEOP_NAMES.cordonedBy]).map((n) => n.metadata?.name),
    ).toEqual([]);
  });
});
