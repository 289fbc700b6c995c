/**
 * Interrupts through the real operator, with the host side of reboots and service restarts played
 * by the sandbox's simulated host: a node is cordoned, drained, runs apply and config, is
 * interrupted once (the packages' interrupts merged), runs post-interrupt and is uncordoned, within
 * the interruptionBudget; pods matching podNonInterruptLabels and a PodDisruptionBudget hold the
 * node visibly; a cordon someone else made is never lifted.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppsV1Api, PolicyV1Api, type V1Node, type V1Pod } from '@kubernetes/client-node';
import type { Package, Skyhook } from '../../src/api/skyhook.js';
import { parseNodeState } from '../../src/api/node-state.js';
import { API_GROUP, API_VERSION, KINDS, nodeAnnotations, SKYHOOK_CONDITIONS } from '../../src/api/names.js';
import { MERGE_PATCH, mergePatchCustomObject } from '../../src/kube/client.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { waitForList } from '../../src/kube/wait.js';
import type { SimulatedHost, SimulatedInterrupt } from '../../src/sandbox/simulated-host.js';
import { recordNodeTimeline } from './node-timeline.js';
import {
  createGroupSkyhook,
  groupNodes,
  recordStageJobs,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';

const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
const pkg = (interrupt?: Package['interrupt']): Package => ({
  version: '1.0.0',
  image: IMAGE,
  ...(interrupt ? { interrupt } : {}),
});
const WORKLOADS = 'default';

let h: SkyhookHarness;
let host: SimulatedHost;

beforeAll(async () => {
  h = await startSkyhookHarness(
    [
      ...groupNodes('reboot', 3),
      ...groupNodes('svc', 1),
      ...groupNodes('hold', 1),
      ...groupNodes('pdb', 1),
      ...groupNodes('foreign', 1),
      ...groupNodes('conf', 1),
    ],
    { simulatedHost: {} },
  );
  host = h.host!;
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const scr = (name: string, group: string, spec: Partial<Skyhook['spec']>): Promise<void> =>
  createGroupSkyhook(h, name, group, spec);

const readNode = (name: string): Promise<V1Node> => h.core.readNode({ name });
const interruptsOn = (node: string): SimulatedInterrupt[] => host.interrupts.filter((i) => i.node === node);
const entriesOf = (node: V1Node, skyhook: string) =>
  parseNodeState(node.metadata?.annotations?.[nodeAnnotations.nodeState(skyhook)] ?? '{}');
/** The services a service interrupt restarted (each restart command ends with the service's name). */
const restartedServices = (interrupt: SimulatedInterrupt): string[] =>
  interrupt.commands
    .slice(1)
    .map((command) => command.at(-1) ?? '')
    .sort();

/** A pod bound to `node` (no controller: the stage drains evict it since drainConfig.force defaults to true). */
async function podOn(node: string, name: string, labels: Record<string, string>): Promise<V1Pod> {
  await h.core.createNamespacedPod({
    namespace: WORKLOADS,
    body: {
      metadata: { name, labels },
      spec: { nodeName: node, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    },
  });
  const pods = await waitForList<V1Pod>(
    h.cp.kubeConfig,
    `/api/v1/namespaces/${WORKLOADS}/pods`,
    (ps) => ps.some((p) => p.metadata?.name === name && p.status?.phase === 'Running'),
    30_000,
    `pod ${name} running`,
  );
  return pods.find((p) => p.metadata?.name === name)!;
}

async function podGone(name: string): Promise<void> {
  await waitForList<V1Pod>(
    h.cp.kubeConfig,
    `/api/v1/namespaces/${WORKLOADS}/pods`,
    (ps) => !ps.some((p) => p.metadata?.name === name),
    60_000,
    `pod ${name} gone`,
  );
}

const condition = (skyhook: Skyhook, type: string) => skyhook.status?.conditions?.find((c) => c.type === type);

describe('reboot packages on 3 nodes with interruptionBudget count 2', () => {
  it('cordons, drains, applies, configures, reboots each node once (merged), runs post-interrupt and uncordons, 2 nodes at most', async () => {
    const nodes = ['reboot-0', 'reboot-1', 'reboot-2'];
    const before = Object.fromEntries(
      await Promise.all(nodes.map(async (n) => [n, (await readNode(n)).status?.nodeInfo?.bootID])),
    );
    const web = await podOn('reboot-0', 'web', { app: 'web' });
    const pods = new Informer<V1Pod>(apiListWatch(h.cp.kubeConfig, `/api/v1/namespaces/${WORKLOADS}/pods`), {
      resource: 'workloads',
      logger: silentLogger(),
    });
    // The revision of its deletion, ordered against the Jobs' creations (seenRv) by etcd, not by when
    // two watches delivered them: the drain creates the Job right after a list shows the pod gone.
    let webGoneAt: number | undefined;
    pods.on({
      delete: (p) => {
        if (p.metadata?.uid === web.metadata?.uid) webGoneAt ??= Number(p.metadata?.resourceVersion);
      },
    });
    pods.start();
    await pods.waitForSync(30_000);
    const timeline = await recordNodeTimeline(h, nodes);
    const jobs = await recordStageJobs(h);

    // kernel reboots, tuning restarts containerd: merged, the reboot wins and tuning's interrupt is skipped.
    await scr('reboots', 'reboot', {
      interruptionBudget: { count: 2 },
      packages: { kernel: pkg({ type: 'reboot' }), tuning: pkg({ type: 'service', services: ['containerd'] }) },
    });
    const done = await waitForSkyhook(h, 'reboots', (s) => s.status?.status === 'complete', 180_000);
    await timeline.uncordoned();
    await Promise.all([timeline.stop(), jobs.stop(), pods.stop()]);

    expect(done.status).toMatchObject({ completeNodes: '3/3', nodesInProgress: 0 });
    expect(timeline.maxCordoned()).toBe(2);
    for (const node of nodes) {
      const interrupts = interruptsOn(node);
      expect(interrupts).toHaveLength(1);
      const [reboot] = interrupts;
      expect(reboot).toMatchObject({ rebootsNode: true, failed: false, bootIdBefore: before[node] });
      const after = await readNode(node);
      expect(after.status?.nodeInfo?.bootID).toBe(reboot!.bootIdAfter);
      expect(reboot!.bootIdAfter).not.toBe(before[node]);

      const onNode = [...jobs.jobs.values()].filter((j) => j.node === node && j.skyhook === 'reboots');
      const stagesOf = (p: string) => onNode.filter((j) => j.package.startsWith(`${p}-`)).map((j) => j.stage);
      expect(stagesOf('kernel')).toEqual(['apply', 'config', 'interrupt', 'post-interrupt']);
      expect(stagesOf('tuning')).toEqual(['apply', 'config', 'post-interrupt']);
      expect(onNode.every((j) => j.succeeded)).toBe(true);

      // cordon → (drain) → apply, config → interrupt after its Job → post-interrupt → uncordon.
      const [span] = timeline.spansOf(node);
      expect(timeline.spansOf(node)).toHaveLength(1);
      const firstJob = Math.min(...onNode.map((j) => j.seenAt));
      expect(span!.from).toBeLessThan(firstJob);
      const beforeInterrupt = onNode.filter((j) => j.stage === 'apply' || j.stage === 'config');
      expect(Math.max(...beforeInterrupt.map((j) => j.doneAt ?? Infinity))).toBeLessThan(reboot!.at);
      // The reboot waited for the interrupt stage's Job (its pod's success is the sentinel).
      const interruptJob = onNode.find((j) => j.stage === 'interrupt')!;
      expect(reboot!.job).toBe(interruptJob.name);
      expect(interruptJob.seenAt).toBeLessThan(reboot!.at);
      expect(Math.min(...onNode.filter((j) => j.stage === 'post-interrupt').map((j) => j.seenAt))).toBeGreaterThan(
        reboot!.at,
      );
      expect(span!.to).toBeGreaterThan(Math.max(...onNode.map((j) => j.doneAt ?? Infinity)));

      expect(after.spec?.unschedulable).toBeFalsy();
      expect(after.metadata?.annotations?.[nodeAnnotations.cordon('reboots')]).toBeUndefined();
      const entries = entriesOf(after, 'reboots');
      expect(entries['kernel|1.0.0']).toMatchObject({ stage: 'post-interrupt', state: 'complete' });
      expect(entries['tuning|1.0.0']).toMatchObject({ stage: 'post-interrupt', state: 'complete' });
    }
    // The workload pod was evicted by the drain, before reboot-0's first Job.
    const firstOnZero = Math.min(
      ...[...jobs.jobs.values()].filter((j) => j.node === 'reboot-0').map((j) => Number(j.seenRv)),
    );
    expect(webGoneAt).toBeDefined();
    expect(webGoneAt!).toBeLessThan(firstOnZero);
  }, 240_000);
});

describe('interrupt grouping', () => {
  it('restarts [containerd, cron, foobar] once for service interrupts [containerd, foobar] and [cron]', async () => {
    const jobs = await recordStageJobs(h);
    await scr('grouping', 'svc', {
      packages: {
        dax: pkg({ type: 'service', services: ['containerd', 'foobar'] }),
        zeb: pkg({ type: 'service', services: ['cron'] }),
      },
    });
    const done = await waitForSkyhook(h, 'grouping', (s) => s.status?.status === 'complete', 120_000);
    await jobs.stop();

    expect(done.status?.completeNodes).toBe('1/1');
    const interrupts = interruptsOn('svc-0');
    expect(interrupts).toHaveLength(1);
    expect(interrupts[0]).toMatchObject({ rebootsNode: false, failed: false });
    expect(restartedServices(interrupts[0]!)).toEqual(['containerd', 'cron', 'foobar']);
    // dax (first by name) owns the merged interrupt; zeb's is skipped.
    expect(jobs.stagesByNode('grouping', 'dax-1.0.0')['svc-0']).toEqual([
      'apply',
      'config',
      'interrupt',
      'post-interrupt',
    ]);
    expect(jobs.stagesByNode('grouping', 'zeb-1.0.0')['svc-0']).toEqual(['apply', 'config', 'post-interrupt']);
    const node = await readNode('svc-0');
    expect(node.spec?.unschedulable).toBeFalsy();
    expect(
      Object.values(entriesOf(node, 'grouping'))
        .map((e) => `${e.name}:${e.stage}:${e.state}`)
        .sort(),
    ).toEqual(['dax:post-interrupt:complete', 'zeb:post-interrupt:complete']);
  }, 180_000);
});

describe('podNonInterruptLabels', () => {
  it('holds the cordoned node, visibly naming the pod, until the pod is deleted; the other pod is evicted', async () => {
    await podOn('hold-0', 'precious', { dontmess: 'withme' });
    await podOn('hold-0', 'evictable', { drain: 'me' });
    const jobs = await recordStageJobs(h);
    await scr('holding', 'hold', {
      podNonInterruptLabels: { matchLabels: { dontmess: 'withme' } },
      packages: { kernel: pkg({ type: 'reboot' }) },
    });

    const held = await waitForSkyhook(h, 'holding', (s) => condition(s, SKYHOOK_CONDITIONS.blocked)?.status === 'True');
    expect(condition(held, SKYHOOK_CONDITIONS.blocked)).toMatchObject({ reason: 'NonInterruptPodsRunning' });
    expect(condition(held, SKYHOOK_CONDITIONS.blocked)?.message).toContain('hold-0');
    const waiting = await readNode('hold-0');
    expect(waiting.spec?.unschedulable).toBe(true);
    expect(waiting.metadata?.annotations?.[nodeAnnotations.cordon('holding')]).toBe('true');
    expect(waiting.metadata?.annotations?.[nodeAnnotations.waiting('holding')]).toBe(
      `NonInterruptPodsRunning: ${WORKLOADS}/precious`,
    );
    // Nothing drained or run while held.
    expect(jobs.jobs.size).toBe(0);
    expect(interruptsOn('hold-0')).toHaveLength(0);
    expect(
      (await h.core.listNamespacedPod({ namespace: WORKLOADS, fieldSelector: 'spec.nodeName=hold-0' })).items
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['evictable', 'precious']);

    await h.core.deleteNamespacedPod({ name: 'precious', namespace: WORKLOADS });
    const done = await waitForSkyhook(h, 'holding', (s) => s.status?.status === 'complete', 120_000);
    await jobs.stop();
    await podGone('evictable');

    expect(condition(done, SKYHOOK_CONDITIONS.blocked)?.status ?? 'False').toBe('False');
    expect(interruptsOn('hold-0')).toHaveLength(1);
    expect(jobs.stagesByNode('holding')['hold-0']).toEqual(['apply', 'config', 'interrupt', 'post-interrupt']);
    const node = await readNode('hold-0');
    expect(node.spec?.unschedulable).toBeFalsy();
    expect(node.metadata?.annotations?.[nodeAnnotations.waiting('holding')]).toBeUndefined();
    expect(entriesOf(node, 'holding')['kernel|1.0.0']).toMatchObject({ stage: 'post-interrupt', state: 'complete' });
  }, 180_000);
});

describe('a PodDisruptionBudget blocking the drain', () => {
  it('shows DrainBlocked naming the pod until the budget goes, then completes', async () => {
    const apps = h.cp.kubeConfig.makeApiClient(AppsV1Api);
    const policy = h.cp.kubeConfig.makeApiClient(PolicyV1Api);
    const labels = { app: 'guarded' };
    // Scheduled, not bound to the node: its replacement must respect the cordon, or the drain never ends.
    await apps.createNamespacedDeployment({
      namespace: WORKLOADS,
      body: {
        metadata: { name: 'guarded' },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              nodeSelector: { 'kubernetes.io/hostname': 'pdb-0' },
              containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
            },
          },
        },
      },
    });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: WORKLOADS,
      body: { metadata: { name: 'guarded' }, spec: { minAvailable: 1, selector: { matchLabels: labels } } },
    });
    // The disruption controller must have judged the budget, or the eviction is allowed or refused for another reason.
    await waitForList(
      h.cp.kubeConfig,
      `/apis/policy/v1/namespaces/${WORKLOADS}/poddisruptionbudgets`,
      (pdbs: { metadata?: { name?: string }; status?: { currentHealthy?: number; observedGeneration?: number } }[]) =>
        pdbs.some(
          (p) =>
            p.metadata?.name === 'guarded' &&
            p.status?.currentHealthy === 1 &&
            p.status.observedGeneration !== undefined,
        ),
      30_000,
      'PDB status',
    );
    const pods = await waitForList<V1Pod>(
      h.cp.kubeConfig,
      `/api/v1/namespaces/${WORKLOADS}/pods?labelSelector=app%3Dguarded`,
      (ps) => ps.some((p) => p.status?.phase === 'Running'),
      30_000,
      'guarded pod',
    );
    const pod = pods.find((p) => p.status?.phase === 'Running')!.metadata!.name!;

    await scr('guarded', 'pdb', { packages: { kernel: pkg({ type: 'reboot' }) } });
    const blocked = await waitForSkyhook(
      h,
      'guarded',
      (s) => condition(s, SKYHOOK_CONDITIONS.drainBlocked)?.status === 'True',
    );
    const drainBlocked = condition(blocked, SKYHOOK_CONDITIONS.drainBlocked)!;
    expect(drainBlocked.reason).toBe('PodDisruptionBudget');
    expect(drainBlocked.message).toContain(`1/1 nodes blocked draining (pdb-0)`);
    expect(drainBlocked.message).toContain(`${WORKLOADS}/${pod} on pdb-0`);
    const node = await readNode('pdb-0');
    expect(node.spec?.unschedulable).toBe(true);
    expect(JSON.parse(node.metadata?.annotations?.[nodeAnnotations.drainBlocked('guarded')] ?? '[]')).toEqual([
      expect.objectContaining({ namespace: WORKLOADS, name: pod, reason: 'PodDisruptionBudget' }),
    ]);
    expect(interruptsOn('pdb-0')).toHaveLength(0);

    await policy.deleteNamespacedPodDisruptionBudget({ name: 'guarded', namespace: WORKLOADS });
    const done = await waitForSkyhook(h, 'guarded', (s) => s.status?.status === 'complete', 120_000);
    expect(condition(done, SKYHOOK_CONDITIONS.drainBlocked)?.status ?? 'False').toBe('False');
    expect(interruptsOn('pdb-0')).toHaveLength(1);
    const after = await readNode('pdb-0');
    expect(after.metadata?.annotations?.[nodeAnnotations.drainBlocked('guarded')]).toBeUndefined();
    expect(after.spec?.unschedulable).toBeFalsy();
  }, 180_000);
});

describe('a cordon someone else made', () => {
  it('is worked under and never lifted', async () => {
    await h.core.patchNode({ name: 'foreign-0', body: { spec: { unschedulable: true } } }, MERGE_PATCH);
    await scr('foreign', 'foreign', { packages: { kernel: pkg({ type: 'reboot' }) } });
    await waitForSkyhook(h, 'foreign', (s) => s.status?.status === 'complete', 120_000);

    expect(interruptsOn('foreign-0')).toHaveLength(1);
    const node = await readNode('foreign-0');
    expect(node.spec?.unschedulable).toBe(true);
    expect(node.metadata?.annotations?.[nodeAnnotations.cordon('foreign')]).toBeUndefined();
    expect(entriesOf(node, 'foreign')['kernel|1.0.0']).toMatchObject({ stage: 'post-interrupt', state: 'complete' });
  }, 180_000);
});

describe('configInterrupts', () => {
  const CONFIG = { 'plain.txt': 'a', 'containerd.toml': 'version = 1', 'app.properties': 'x=1' };
  const configured: Package = {
    ...pkg({ type: 'reboot' }),
    configMap: CONFIG,
    configInterrupts: {
      'containerd.toml': { type: 'service', services: ['containerd'] },
      '*.properties': { type: 'restartAllServices' },
    },
  };

  /** Changes one key of the package's configMap and waits for the SCR to complete that generation; returns the stages run. */
  async function changeKey(key: string, value: string): Promise<string[]> {
    const jobs = await recordStageJobs(h);
    const ref = { group: API_GROUP, version: API_VERSION, plural: KINDS.skyhook.plural, name: 'configured' };
    const patched = await mergePatchCustomObject<Skyhook>(h.custom, ref, {
      spec: { packages: { conf: { configMap: { [key]: value } } } },
    });
    const generation = patched.metadata.generation;
    await waitForSkyhook(
      h,
      'configured',
      (s) => s.status?.status === 'complete' && s.status.observedGeneration === generation,
      120_000,
    );
    await jobs.stop();
    return jobs.stagesByNode('configured')['conf-0'] ?? [];
  }

  it('runs config only for a key without one, and the matching interrupt for an exact key and a glob', async () => {
    await scr('configured', 'conf', { packages: { conf: configured } });
    await waitForSkyhook(h, 'configured', (s) => s.status?.status === 'complete', 120_000);
    expect(interruptsOn('conf-0')).toHaveLength(1);
    expect(interruptsOn('conf-0')[0]?.rebootsNode).toBe(true);

    // No configInterrupt matches: config only, even though the package reboots on apply.
    expect(await changeKey('plain.txt', 'b')).toEqual(['config']);
    expect(interruptsOn('conf-0')).toHaveLength(1);
    const node = await readNode('conf-0');
    expect(entriesOf(node, 'configured')['conf|1.0.0']).toMatchObject({ stage: 'config', state: 'complete' });
    expect(node.spec?.unschedulable).toBeFalsy();

    // The exact key: containerd restarted, not a reboot.
    expect(await changeKey('containerd.toml', 'version = 2')).toEqual(['config', 'interrupt', 'post-interrupt']);
    expect(interruptsOn('conf-0')).toHaveLength(2);
    expect(interruptsOn('conf-0')[1]).toMatchObject({ rebootsNode: false });
    expect(restartedServices(interruptsOn('conf-0')[1]!)).toEqual(['containerd']);

    // The glob: every service restarted.
    expect(await changeKey('app.properties', 'x=2')).toEqual(['config', 'interrupt', 'post-interrupt']);
    expect(interruptsOn('conf-0')).toHaveLength(3);
    expect(interruptsOn('conf-0')[2]).toMatchObject({ rebootsNode: false });
    expect(interruptsOn('conf-0')[2]?.commands).toHaveLength(1);
    const after = await readNode('conf-0');
    expect(entriesOf(after, 'configured')['conf|1.0.0']).toMatchObject({ stage: 'post-interrupt', state: 'complete' });
    expect(after.spec?.unschedulable).toBeFalsy();
  }, 300_000);
});
