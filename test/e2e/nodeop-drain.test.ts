/**
 * NodeOp cordon and drain against the real control plane: a workload pod is evicted (and gone)
 * before the node's Job exists while a DaemonSet pod stays; a PodDisruptionBudget that forbids the
 * eviction makes the drain time out naming the pod; a node is uncordoned only by the NodeOp that
 * cordoned it (after success, after failure only with uncordonOnFailure, and when the NodeOp is
 * deleted).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppsV1Api, PolicyV1Api, type CoreV1Event, type V1Job, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { NODEOP_NAMES } from '../../src/api/names.js';
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
  type NodeOpHarness,
} from './nodeop-harness.js';

let h: NodeOpHarness;
let apps: AppsV1Api;
let policy: PolicyV1Api;
const WORK = 'work';

beforeAll(async () => {
  h = await startNodeOpHarness(['d-1', 'd-2', 'd-3', 'd-4', 'd-5'].map((name) => ({ name })));
  apps = h.cp.kubeConfig.makeApiClient(AppsV1Api);
  policy = h.cp.kubeConfig.makeApiClient(PolicyV1Api);
  await createNamespace(h, WORK);
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const onNode = (node: string) => ({ nodeSelector: { 'kubernetes.io/hostname': node } });
const container = { name: 'app', image: 'registry.k8s.io/pause:3.10' };

async function deployment(name: string, node: string): Promise<void> {
  const labels = { app: name };
  await apps.createNamespacedDeployment({
    namespace: WORK,
    body: {
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { ...onNode(node), containers: [container] } },
      },
    },
  });
}

async function daemonSet(name: string, node: string): Promise<void> {
  const labels = { app: name };
  await apps.createNamespacedDaemonSet({
    namespace: WORK,
    body: {
      metadata: { name },
      spec: {
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { ...onNode(node), containers: [container] } },
      },
    },
  });
}

async function forbidEviction(app: string): Promise<void> {
  await policy.createNamespacedPodDisruptionBudget({
    namespace: WORK,
    body: { metadata: { name: app }, spec: { minAvailable: 1, selector: { matchLabels: { app } } } },
  });
  // The disruption controller must have judged the budget, or the eviction is refused for another reason.
  await waitForList(
    h.cp.kubeConfig,
    `/apis/policy/v1/namespaces/${WORK}/poddisruptionbudgets`,
    (pdbs: { metadata?: { name?: string }; status?: { currentHealthy?: number; observedGeneration?: number } }[]) =>
      pdbs.some(
        (p) => p.metadata?.name === app && p.status?.currentHealthy === 1 && p.status.observedGeneration !== undefined,
      ),
    30_000,
    `PDB ${app} status`,
  );
}

async function runningPod(app: string): Promise<V1Pod> {
  const pods = await waitForList<V1Pod>(
    h.cp.kubeConfig,
    `/api/v1/namespaces/${WORK}/pods?labelSelector=app%3D${app}`,
    (ps) => ps.some((p) => p.status?.phase === 'Running'),
    30_000,
    `pod of ${app}`,
  );
  return pods.find((p) => p.status?.phase === 'Running')!;
}

const readNode = (name: string): Promise<V1Node> => h.core.readNode({ name });

const drainSpec = (node: string, extra: Partial<NodeOpSpec> = {}): NodeOpSpec => ({
  targetNodes: [node],
  image: 'busybox:1.37',
  command: ['/bin/sh', '-c', 'chroot $HOST_DIR uptime'],
  cordon: true,
  drainOptions: { enabled: true, timeoutSeconds: 30 },
  ...extra,
});

describe('cordon and drain', () => {
  it('evicts the workload pod (gone, not just accepted) before the Job exists, leaves the DaemonSet pod, then uncordons', async () => {
    await deployment('web', 'd-1');
    await daemonSet('agent', 'd-1');
    const web = await runningPod('web');
    const agent = await runningPod('agent');

    // When the workload pod disappeared and when the Job appeared, as etcd revisions (one order for the
    // cluster): the drain lists the node's pods and creates the Job right after the list shows the pod
    // gone, so on two watches the Job may arrive before the pod's deletion does.
    const seen: { podGoneAt?: number; jobAt?: number } = {};
    const revision = (o: V1Pod | V1Job): number => Number(o.metadata?.resourceVersion);
    const pods = new Informer<V1Pod>(apiListWatch(h.cp.kubeConfig, `/api/v1/namespaces/${WORK}/pods`), {
      resource: 'work-pods',
      logger: silentLogger(),
    });
    pods.on({
      delete: (p) => {
        if (p.metadata?.uid === web.metadata?.uid) seen.podGoneAt ??= revision(p);
      },
    });
    const jobs = new Informer<V1Job>(apiListWatch(h.cp.kubeConfig, '/apis/batch/v1/namespaces/drain-ok/jobs'), {
      resource: 'drain-jobs',
      logger: silentLogger(),
    });
    jobs.on({
      add: (job) => {
        seen.jobAt ??= revision(job);
      },
    });
    await createNamespace(h, 'drain-ok');
    pods.start();
    jobs.start();
    await Promise.all([pods.waitForSync(30_000), jobs.waitForSync(30_000)]);

    await createNodeOp(h, 'drain-ok', 'drain', drainSpec('d-1'));
    const done = await waitForNodeOp(h, 'drain-ok', 'drain', (op) => op.status?.phase === 'Completed');
    await Promise.all([pods.stop(), jobs.stop()]);

    expect(seen.podGoneAt).toBeDefined();
    expect(seen.jobAt).toBeDefined();
    expect(seen.podGoneAt!).toBeLessThan(seen.jobAt!);
    // The Deployment's replacement may come back once the node is uncordoned; the evicted pod may not.
    const left = (await h.core.listNamespacedPod({ namespace: WORK, fieldSelector: 'spec.nodeName=d-1' })).items.map(
      (p) => p.metadata?.uid,
    );
    expect(left).toContain(agent.metadata?.uid);
    expect(left).not.toContain(web.metadata?.uid);
    expect(done.status?.nodeStatuses?.['d-1']?.phase).toBe('Completed');
    const node = await readNode('d-1');
    expect(node.spec?.unschedulable).toBeFalsy();
    expect(node.metadata?.annotations?.[NODEOP_NAMES.cordonedBy]).toBeUndefined();

    // What happened is told on the NodeOp and on the node (`kubectl describe`).
    const reasons = ['Cordoned', 'Drained', 'JobCreated', 'NodeCompleted', 'Uncordoned'];
    const onNodeOp = await waitForList<CoreV1Event>(
      h.cp.kubeConfig,
      '/api/v1/namespaces/drain-ok/events',
      (evs) => reasons.every((r) => evs.some((e) => e.reason === r && e.involvedObject.kind === 'NodeOp')),
      30_000,
      'NodeOp events',
    );
    expect(onNodeOp.find((e) => e.reason === 'Drained')?.message).toContain(`${WORK}/${web.metadata?.name}`);
    await waitForList<CoreV1Event>(
      h.cp.kubeConfig,
      '/api/v1/namespaces/default/events',
      (evs) =>
        evs.some((e) => e.reason === 'Drained' && e.involvedObject.kind === 'Node' && e.involvedObject.name === 'd-1'),
      30_000,
      'node events',
    );
  });

  it('times out a drain that a PodDisruptionBudget blocks, naming the pod, and uncordons the node it cordoned', async () => {
    await deployment('guarded', 'd-2');
    const guarded = await runningPod('guarded');
    await forbidEviction('guarded');
    await createNamespace(h, 'drain-pdb');
    await createNodeOp(
      h,
      'drain-pdb',
      'drain',
      drainSpec('d-2', { drainOptions: { enabled: true, timeoutSeconds: 3 } }),
    );

    const failed = await waitForNodeOp(h, 'drain-pdb', 'drain', (op) => op.status?.phase === 'Failed');
    const status = failed.status?.nodeStatuses?.['d-2'];
    expect(status?.phase).toBe('Failed');
    expect(status?.message).toMatch(/timed out after 3s/);
    expect(status?.message).toContain(`${WORK}/${guarded.metadata?.name}`);
    expect(status?.message).toMatch(/disruption budget/i);
    expect((await h.batch.listNamespacedJob({ namespace: 'drain-pdb' })).items).toHaveLength(0);
    await h.core.readNamespacedPod({ name: guarded.metadata?.name ?? '', namespace: WORK });
    const node = await readNode('d-2');
    expect(node.spec?.unschedulable).toBeFalsy();
    expect(node.metadata?.annotations?.[NODEOP_NAMES.cordonedBy]).toBeUndefined();
  });

  it('leaves a node cordoned by someone else cordoned after a failed drain', async () => {
    await deployment('guarded-3', 'd-3');
    await runningPod('guarded-3');
    await forbidEviction('guarded-3');
    const cordoned = await h.cp.kubectl(['cordon', 'd-3']);
    expect(cordoned.code).toBe(0);
    await createNamespace(h, 'drain-theirs');
    await createNodeOp(
      h,
      'drain-theirs',
      'drain',
      drainSpec('d-3', { drainOptions: { enabled: true, timeoutSeconds: 2 }, uncordonOnFailure: true }),
    );

    const failed = await waitForNodeOp(h, 'drain-theirs', 'drain', (op) => op.status?.phase === 'Failed');
    expect(failed.status?.nodeStatuses?.['d-3']?.message).toMatch(/guarded-3/);
    const node = await readNode('d-3');
    expect(node.spec?.unschedulable).toBe(true);
    expect(node.metadata?.annotations?.[NODEOP_NAMES.cordonedBy]).toBeUndefined();
  });
});

describe('uncordon after a failed Job', () => {
  const failing = (node: string, uncordonOnFailure: boolean): NodeOpSpec => ({
    targetNodes: [node],
    image: 'busybox:1.37',
    command: ['false'],
    env: [{ name: SIM_ENV.exitCode, value: '5' }],
    backoffLimit: 0,
    cordon: true,
    uncordonOnFailure,
  });

  it('keeps the node cordoned without uncordonOnFailure, and uncordons it when the NodeOp is deleted', async () => {
    await createNamespace(h, 'fail-keep');
    await createNodeOp(h, 'fail-keep', 'op', failing('d-4', false));
    const failed = await waitForNodeOp(h, 'fail-keep', 'op', (op) => op.status?.phase === 'Failed');
    expect(failed.status?.nodeStatuses?.['d-4']?.message).toMatch(/exited with code 5/);
    const node = await readNode('d-4');
    expect(node.spec?.unschedulable).toBe(true);
    expect(node.metadata?.annotations?.[NODEOP_NAMES.cordonedBy]).toBe(`fail-keep/op@${failed.metadata.uid}`);

    await h.custom.deleteNamespacedCustomObject({
      group: 'skyhook.nvidia.com',
      version: 'v1alpha1',
      plural: 'nodeops',
      namespace: 'fail-keep',
      name: 'op',
    });
    await waitForList<V1Node>(
      h.cp.kubeConfig,
      '/api/v1/nodes',
      (nodes) => nodes.some((n) => n.metadata?.name === 'd-4' && !n.spec?.unschedulable),
      30_000,
      'd-4 uncordoned',
    );
    await waitForList(
      h.cp.kubeConfig,
      '/apis/batch/v1/namespaces/fail-keep/jobs',
      (jobs) => jobs.length === 0,
      30_000,
      'Jobs of the deleted NodeOp gone',
    );
  });

  it('uncordons the node it cordoned with uncordonOnFailure', async () => {
    await createNamespace(h, 'fail-release');
    await createNodeOp(h, 'fail-release', 'op', failing('d-5', true));
    await waitForNodeOp(h, 'fail-release', 'op', (op) => op.status?.phase === 'Failed');
    const node = await waitForList<V1Node>(
      h.cp.kubeConfig,
      '/api/v1/nodes',
      (nodes) => nodes.some((n) => n.metadata?.name === 'd-5' && !n.spec?.unschedulable),
      30_000,
      'd-5 uncordoned',
    );
    expect(
      node.find((n) => n.metadata?.name === 'd-5')?.metadata?.annotations?.[NODEOP_NAMES.cordonedBy],
    ).toBeUndefined();
  });
});
