/**
 * Interrupts and failures on a real node (kubelet + containerd; real containers, a real reboot):
 *   - a real drain: a Deployment's pods on the node, guarded by a PodDisruptionBudget, are evicted
 *     only as the budget allows, and nothing runs on the node until they are gone;
 *   - a reboot interrupt: the interrupt stage's Job completes before the node goes down, the node
 *     comes back with a new boot ID (its kubelet and containerd restarted), post-interrupt runs
 *     after, no stage runs twice, and the node is uncordoned;
 *   - a failing package step: its log tail is in the Skyhook's Event, the node is erroring, and
 *     fixing the SCR recovers it;
 *   - a package image whose config.json is invalid: the Event names config.json, the problem and the
 *     fix, no state on the node is lost, and publishing the fixed image recovers it;
 *   - a package image that cannot be pulled (a tag the repository does not have, a registry that does
 *     not exist): the stage fails once its pod is stuck pulling, and the Skyhook's StageFailed Event
 *     carries the real kubelet's pull error naming the image, then the fix. The simulated kubelet
 *     scripts this message (src/sandbox/kwok-stages.ts); here containerd writes it, so the operator's
 *     reading of pod statuses meets the real thing.
 * The cases share one node, control plane and operator; each has its own Skyhook.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  AppsV1Api,
  PolicyV1Api,
  Watch,
  type CoreV1Event,
  type V1Job,
  type V1Pod,
  type V1PodDisruptionBudget,
} from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHILD_LABELS, KUBERNETES_NAMES, nodeAnnotations, SKYHOOK_CONDITIONS } from '../../src/api/names.js';
import type { Skyhook } from '../../src/api/skyhook.js';
import { STAGE_FAILED_REASON } from '../../src/controllers/skyhook/write/failed-stage-report.js';
import { parseNodeState } from '../../src/api/node-state.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { getJson, waitForList } from '../../src/kube/wait.js';
import { PACKAGE_FIX_HINT } from '../../src/agent/package-loader.js';
import { STUCK_MARK } from '../../src/jobs/job-progress.js';
import { recordNodeTimeline } from './node-timeline.js';
import {
  createGroupSkyhook,
  GROUP_LABEL,
  NAMESPACE,
  publishPackageImage,
  recordStageJobs,
  reportedBootId,
  setSkyhookPackages,
  startRealHarness,
  waitForSkyhook,
  waitForSkyhookGone,
  type RealHarness,
  stageFailed,
} from './real-harness.js';

const NODE = 'real-0';
const GROUP = 'real';
// The package image is tagged 1.1.0 only (the README demo's version): packages here use that version.
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
const WORKLOADS = 'default';
let h: RealHarness;

beforeAll(async () => {
  // One attempt per stage Job: the default four spend about a minute in the Job controller's backoff
  // (10 s, 20 s, 40 s) before the failing step's Job gives up, and the stages that should pass must
  // pass first time. A failed stage is still retried by the operator (a new Job), as the recoveries
  // below need.
  h = await startRealHarness({
    realNodes: 1,
    realNodeLabels: { [GROUP_LABEL]: GROUP },
    skyhook: { settings: { jobBackoffLimit: 0 } },
    // A pod waiting on a pull this long fails its stage (the default is a minute). The wait is judged
    // only once a container waits with a pull error, so the Event always carries the kubelet's words.
    nodeOpSettings: { stuckPodTimeoutMs: 8_000 },
  });
}, 300_000);

afterAll(async () => {
  await h?.stop();
}, 120_000);

/**
 * The guarded pods as the API server held them at the very revision that created `skyhook`'s first
 * stage Job. Ordering across two watches (pods, Jobs) is only as good as their delivery; one read at
 * the Job's creation revision has a single source of truth. A watch event carries its object at the
 * revision of that change, so the first ADDED event of the Job names its creation revision.
 */
async function guardedPodsWhenFirstJobCreated(
  harness: RealHarness,
  skyhook: string,
): Promise<{ pods: Promise<{ job: string; pods: V1Pod[] }>; stop: () => Promise<void> }> {
  const kc = harness.cp.kubeConfig;
  const path = `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`;
  const { metadata } = await getJson<{ metadata: { resourceVersion: string } }>(kc, path);
  let controller: AbortController | undefined;
  let caught = false;
  const pods = new Promise<{ job: string; pods: V1Pod[] }>((resolve, reject) => {
    new Watch(kc)
      .watch(
        path,
        { resourceVersion: metadata.resourceVersion },
        (type: string, job: V1Job) => {
          if (caught || type !== 'ADDED' || job.metadata?.labels?.[CHILD_LABELS.name] !== skyhook) return;
          caught = true;
          const revision = job.metadata?.resourceVersion ?? '';
          getJson<{ items: V1Pod[] }>(
            kc,
            `/api/v1/namespaces/${WORKLOADS}/pods?labelSelector=app%3Dguarded&resourceVersion=${revision}&resourceVersionMatch=Exact`,
          ).then((list) => resolve({ job: job.metadata?.name ?? '', pods: list.items }), reject);
        },
        (err: unknown) => {
          if (!caught) reject(err ?? new Error(`watch of ${path} ended before a stage Job of ${skyhook}`));
        },
      )
      .then((c) => {
        controller = c;
      }, reject);
  });
  pods.catch(() => undefined);
  return { pods, stop: async () => controller?.abort() };
}

const condition = (skyhook: Skyhook, type: string) => skyhook.status?.conditions?.find((c) => c.type === type);
const bootIdLine = (stage: string): string =>
  `echo "${stage} $(cat /proc/sys/kernel/random/boot_id)" >> /skyhook-reboot-demo`;

describe('a real drain, then a reboot interrupt on a real node', () => {
  it('evicts as the budget allows, runs apply and config, reboots once after the Job, runs post-interrupt and uncordons', async () => {
    const apps = h.cp.kubeConfig.makeApiClient(AppsV1Api);
    const policy = h.cp.kubeConfig.makeApiClient(PolicyV1Api);
    const labels = { app: 'guarded' };
    await apps.createNamespacedDeployment({
      namespace: WORKLOADS,
      body: {
        metadata: { name: 'guarded' },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              nodeSelector: { 'kubernetes.io/hostname': NODE },
              terminationGracePeriodSeconds: 2,
              containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
            },
          },
        },
      },
    });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: WORKLOADS,
      body: { metadata: { name: 'guarded' }, spec: { maxUnavailable: 1, selector: { matchLabels: labels } } },
    });
    const running = await waitForList<V1Pod>(
      h.cp.kubeConfig,
      `/api/v1/namespaces/${WORKLOADS}/pods?labelSelector=app%3Dguarded`,
      (ps) => ps.filter((p) => p.status?.phase === 'Running').length === 2,
      90_000,
      'two guarded pods running in real containers',
    );
    const originals = new Set(running.map((p) => p.metadata?.uid ?? ''));
    await waitForList<V1PodDisruptionBudget>(
      h.cp.kubeConfig,
      `/apis/policy/v1/namespaces/${WORKLOADS}/poddisruptionbudgets`,
      (pdbs: V1PodDisruptionBudget[]) =>
        pdbs.some((p) => p.status?.currentHealthy === 2 && p.status.disruptionsAllowed === 1),
      30_000,
      'PDB allowing one disruption',
    );

    const goneAt = new Map<string, number>();
    const pods = new Informer<V1Pod>(apiListWatch(h.cp.kubeConfig, `/api/v1/namespaces/${WORKLOADS}/pods`), {
      resource: 'guarded',
      logger: silentLogger(),
    });
    pods.on({
      delete: (p) => {
        if (originals.has(p.metadata?.uid ?? '')) goneAt.set(p.metadata?.uid ?? '', Date.now());
      },
    });
    pods.start();
    await pods.waitForSync(30_000);
    const timeline = await recordNodeTimeline(h, [NODE]);
    const jobs = await recordStageJobs(h);
    const firstJob = await guardedPodsWhenFirstJobCreated(h, 'reboots');
    const bootBefore = h.node(NODE).boots.at(-1)!.bootId;
    expect(await reportedBootId(h, NODE)).toBe(bootBefore);

    await createGroupSkyhook(h, 'reboots', GROUP, {
      packages: {
        kernel: {
          version: '1.1.0',
          image: IMAGE,
          interrupt: { type: 'reboot' },
          configMap: {
            'apply.sh': bootIdLine('apply'),
            'config.sh': bootIdLine('config'),
            'post_interrupt.sh': bootIdLine('post-interrupt'),
          },
        },
      },
    });
    const blocked = await waitForSkyhook(
      h,
      'reboots',
      (s) => condition(s, SKYHOOK_CONDITIONS.drainBlocked)?.status === 'True',
      120_000,
    );
    expect(condition(blocked, SKYHOOK_CONDITIONS.drainBlocked)?.reason).toBe('PodDisruptionBudget');
    // One eviction was allowed; the other pod is held by the budget, and nothing ran on the node.
    await waitForList<V1Pod>(
      h.cp.kubeConfig,
      `/api/v1/namespaces/${WORKLOADS}/pods?labelSelector=app%3Dguarded`,
      (ps) => ps.filter((p) => originals.has(p.metadata?.uid ?? '')).length === 1,
      60_000,
      'one guarded pod evicted',
    );
    expect(jobs.jobs.size).toBe(0);
    expect(h.node(NODE).boots).toHaveLength(1);

    await policy.deleteNamespacedPodDisruptionBudget({ name: 'guarded', namespace: WORKLOADS });
    const done = await waitForSkyhook(h, 'reboots', (s) => s.status?.status === 'complete', 240_000);
    await timeline.uncordoned();
    await Promise.all([timeline.stop(), jobs.stop(), pods.stop(), firstJob.stop()]);

    expect(done.status).toMatchObject({ completeNodes: '1/1' });
    const boots = h.node(NODE).boots;
    expect(boots).toHaveLength(2);
    const [, reboot] = boots;
    expect(reboot!.bootId).not.toBe(bootBefore);
    expect(await reportedBootId(h, NODE)).toBe(reboot!.bootId);

    const onNode = [...jobs.jobs.values()].filter((j) => j.node === NODE);
    expect(onNode.map((j) => j.stage)).toEqual(['apply', 'config', 'interrupt', 'post-interrupt']);
    expect(onNode.every((j) => j.succeeded && !j.failed)).toBe(true);
    // Both original pods were evicted, and the API server itself says the first stage Job came after
    // they were gone: at the revision that created it, no original pod existed any more.
    expect(goneAt.size).toBe(2);
    const atFirstJob = await firstJob.pods;
    expect(atFirstJob.job).toBe(onNode[0]!.name);
    expect(atFirstJob.pods.filter((p) => originals.has(p.metadata?.uid ?? '')).map((p) => p.metadata?.name)).toEqual(
      [],
    );
    // The interrupt Job finished before the node went down: its pod's exits, as the node recorded
    // them, come before the new boot. (The API server may hear of them only after the reboot: the
    // reboot pod acts on the Job's sentinel file, not on the Job's status.)
    const interruptJob = onNode.find((j) => j.stage === 'interrupt')!;
    const interruptPods = await h.core.listNamespacedPod({
      namespace: NAMESPACE,
      labelSelector: `${KUBERNETES_NAMES.jobNameLabel}=${interruptJob.name}`,
    });
    expect(interruptPods.items).toHaveLength(1);
    const [interruptPod] = interruptPods.items;
    expect(interruptPod!.status?.phase).toBe('Succeeded');
    const exits = [
      ...(interruptPod!.status?.initContainerStatuses ?? []),
      ...(interruptPod!.status?.containerStatuses ?? []),
    ].map((c) => c.state?.terminated);
    expect(exits.map((t) => t?.exitCode)).toEqual(exits.map(() => 0));
    expect(Math.max(...exits.map((t) => new Date(t?.finishedAt ?? Infinity).getTime()))).toBeLessThanOrEqual(
      reboot!.at,
    );
    expect(onNode.find((j) => j.stage === 'post-interrupt')!.seenAt).toBeGreaterThan(reboot!.at);
    expect(readFileSync(join(h.node(NODE).rootDir, 'skyhook-reboot-demo'), 'utf8')).toBe(
      `apply ${bootBefore}\nconfig ${bootBefore}\npost-interrupt ${reboot!.bootId}\n`,
    );

    const [span] = timeline.spansOf(NODE);
    expect(timeline.spansOf(NODE)).toHaveLength(1);
    expect(span!.to).toBeGreaterThan(Math.max(...onNode.map((j) => j.doneAt ?? Infinity)));
    const node = await h.core.readNode({ name: NODE });
    expect(node.spec?.unschedulable).toBeFalsy();
    expect(
      parseNodeState(node.metadata?.annotations?.[nodeAnnotations.nodeState('reboots')] ?? '{}')['kernel|1.1.0'],
    ).toMatchObject({ stage: 'post-interrupt', state: 'complete' });
    await apps.deleteNamespacedDeployment({ name: 'guarded', namespace: WORKLOADS });
  }, 420_000);
});

describe('a failing package step on a real node', () => {
  afterEach(() => removeUnlessComplete('failing'), 180_000);
  it("puts its log tail in the Skyhook's Event, marks the node erroring, and recovers when the SCR is fixed", async () => {
    const broken = {
      version: '1.1.0',
      image: IMAGE,
      configMap: { 'apply.sh': 'echo "cannot tune: /proc/sys/vm/nr_hugepages is busy"\nexit 3' },
    };
    await createGroupSkyhook(h, 'failing', GROUP, { packages: { hugepages: broken } });
    const events = await waitForList<CoreV1Event>(
      h.cp.kubeConfig,
      '/api/v1/events',
      (all) => all.some((e) => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === 'failing'),
      120_000,
      'StageFailed event on the SCR',
    );
    const event = events.find((e) => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === 'failing')!;
    expect(event.involvedObject.kind).toBe('Skyhook');
    expect(event.message).toContain(
      `Package [hugepages:1.1.0] stage [apply] failed on node [${NODE}]: container hugepages-apply exited with code`,
    );
    // The tail is the step's run, not the agent's start-up banner.
    expect(event.message).toMatch(
      /log tail: .*cannot tune: \/proc\/sys\/vm\/nr_hugepages is busy.*FAILED: shellscript_run\.sh apply 3$/,
    );
    expect(event.message).not.toContain('SKYHOOK_AGENT_BUFFER_LIMIT');
    const erroring = await waitForSkyhook(h, 'failing', (s) => s.status?.nodeStatus?.[NODE] === 'erroring', 60_000);
    expect(erroring.status?.status).toBe('erroring');

    await setSkyhookPackages(h, 'failing', {
      hugepages: { ...broken, configMap: { 'apply.sh': 'echo fixed > /skyhook-hugepages' } },
    });
    const fixed = await waitForSkyhook(h, 'failing', (s) => s.status?.status === 'complete', 180_000);
    expect(fixed.status?.nodeStatus?.[NODE]).toBe('complete');
    expect(readFileSync(join(h.node(NODE).rootDir, 'skyhook-hugepages'), 'utf8')).toBe('fixed\n');
  }, 360_000);
});

/**
 * A case that fails midway leaves its Skyhook erroring on the node, and an erroring Skyhook holds
 * every later case's Skyhook back there: one failure would then read as three. Removed after each
 * case unless it completed (the cases that pass delete theirs, or leave it complete).
 */
async function removeUnlessComplete(name: string): Promise<void> {
  const found = (await h.custom
    .getClusterCustomObject({ group: 'skyhook.nvidia.com', version: 'v1alpha1', plural: 'skyhooks', name })
    .catch(() => undefined)) as Skyhook | undefined;
  if (!found || found.status?.status === 'complete') return;
  await h.custom
    .deleteClusterCustomObject({ group: 'skyhook.nvidia.com', version: 'v1alpha1', plural: 'skyhooks', name })
    .catch(() => undefined);
  await waitForSkyhookGone(h, name, 120_000);
}

describe('a package image whose config.json is invalid, on a real node', () => {
  afterEach(() => removeUnlessComplete('badconfig'), 180_000);
  it('fails the stage naming config.json, its problem and the fix, loses no node state, and recovers when the image is fixed', async () => {
    const image = 'registry.invalid/team/broken-config';
    // What a package author may push: config.json cut off mid-object.
    await publishPackageImage(h, NODE, `${image}:1.0.0`, { 'config.json': '{"schema_version": "v1", "modes": {' });
    const stateOf = async (): Promise<Record<string, string>> =>
      Object.fromEntries(
        Object.entries((await h.core.readNode({ name: NODE })).metadata?.annotations ?? {}).filter(([key]) =>
          key.startsWith(nodeAnnotations.nodeState('')),
        ),
      );
    const before = await stateOf();
    const jobs = await recordStageJobs(h);
    await createGroupSkyhook(h, 'badconfig', GROUP, {
      packages: {
        good: { version: '1.1.0', image: IMAGE, configMap: { 'apply.sh': 'echo good >> /skyhook-badconfig-good' } },
        broken: { version: '1.0.0', image, configMap: { 'apply.sh': 'echo fixed > /skyhook-badconfig' } },
      },
    });
    const failed = (e: CoreV1Event) => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === 'badconfig';
    const events = await waitForList<CoreV1Event>(
      h.cp.kubeConfig,
      '/api/v1/events',
      (all) => all.some(failed),
      120_000,
      'StageFailed event on the SCR',
    );
    const message = events.find(failed)!.message ?? '';
    if (!message.includes('log tail:')) {
      // Evidence for a failure below: what the kubelet recorded for the container, and every such Event.
      const recorded = (await h.core.listNamespacedPod({ namespace: NAMESPACE })).items.flatMap((p) =>
        [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]
          .filter((c) => c.name === 'broken-apply')
          .map((c) => ({ pod: p.metadata?.name, state: c.state, lastState: c.lastState })),
      );
      console.log(
        `StageFailed without a log tail: ${JSON.stringify({ events: events.filter(failed).map((e) => e.message), recorded })}`,
      );
    }
    expect(message).toContain(
      `Package [broken:1.0.0] stage [apply] failed on node [${NODE}]: container broken-apply exited with code 1`,
    );
    // The problem (which file, what is wrong with it) and the fix, as the agent said them.
    expect(message).toMatch(
      /ERROR:root:invalid package: \| +\S*\/config\.json: Expected property name or '\}' in JSON/,
    );
    expect(message).toContain(PACKAGE_FIX_HINT);
    // The kubelet saved the failed container's log tail in the pod's status, so the explanation
    // does not depend on the log file outliving the failed pod's containers.
    const pods = await h.core.listNamespacedPod({ namespace: NAMESPACE });
    const saved = pods.items
      .flatMap((p) => [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])])
      .filter((c) => c.name === 'broken-apply')
      .map((c) => c.state?.terminated?.message ?? '');
    expect(saved.some((m) => m.includes(PACKAGE_FIX_HINT))).toBe(true);
    await waitForSkyhook(h, 'badconfig', (s) => s.status?.nodeStatus?.[NODE] === 'erroring', 60_000);
    // Nothing the node had recorded for other Skyhooks changed.
    const during = await stateOf();
    for (const [key, value] of Object.entries(before)) expect(during[key]).toBe(value);

    // The author publishes the fixed image under the same tag; the stage's retry picks it up.
    await publishPackageImage(h, NODE, `${image}:1.0.0`, {});
    const fixed = await waitForSkyhook(h, 'badconfig', (s) => s.status?.status === 'complete', 180_000);
    await jobs.stop();
    expect(fixed.status?.nodeStatus?.[NODE]).toBe('complete');
    expect(readFileSync(join(h.node(NODE).rootDir, 'skyhook-badconfig'), 'utf8')).toBe('fixed\n');
    // The other package ran each stage once: its progress was kept through this one's failure.
    expect(readFileSync(join(h.node(NODE).rootDir, 'skyhook-badconfig-good'), 'utf8')).toBe('good\n');
    const good = [...jobs.jobs.values()].filter((j) => j.skyhook === 'badconfig' && j.package.startsWith('good'));
    expect(good.map((j) => j.stage).sort()).toEqual(['apply', 'config']);
    const after = await stateOf();
    for (const [key, value] of Object.entries(before)) expect(after[key]).toBe(value);
    expect(parseNodeState(after[nodeAnnotations.nodeState('badconfig')] ?? '{}')).toMatchObject({
      'good|1.1.0': { state: 'complete' },
      'broken|1.0.0': { state: 'complete' },
    });
  }, 240_000);
});

describe.each([
  {
    name: 'wrong-tag',
    what: 'a tag its repository does not have',
    image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
    version: '0.0.0-no-such-tag',
  },
  {
    name: 'no-registry',
    what: 'a registry that does not exist',
    image: 'registry.invalid/skyhook/missing',
    version: '1.0.0',
  },
])('a package image from $what, on a real node', ({ name, image, version }) => {
  afterEach(() => removeUnlessComplete(name), 180_000);
  it("fails the stage with the real kubelet's pull error naming the image, and the fix", async () => {
    await createGroupSkyhook(h, name, GROUP, { packages: { pkg: { version, image } } });
    const event = await stageFailed(h, name);
    const ref = `${image}:${version}`;
    expect(event.involvedObject.kind).toBe('Skyhook');
    expect(event.message).toContain(`Package [pkg:${version}] stage [apply] failed on node [${NODE}]`);
    expect(event.message).toContain(STUCK_MARK);
    expect(event.message).toMatch(/ErrImagePull|ImagePullBackOff/);
    expect(event.message).toContain(ref);
    // containerd's words, not the simulated kubelet's script.
    expect(event.message).toMatch(/failed to (pull and unpack image|resolve reference|pull image)/i);
    expect(event.message).not.toContain('simulated registry');
    expect(event.message).toContain('check that the image exists');
    const erroring = await waitForSkyhook(h, name, (s) => s.status?.nodeStatus?.[NODE] === 'erroring', 60_000);
    expect(erroring.status?.status).toBe('erroring');
    // Gone before the next case, so an erroring Skyhook holds no later one back on the node.
    await h.custom.deleteClusterCustomObject({
      group: 'skyhook.nvidia.com',
      version: 'v1alpha1',
      plural: 'skyhooks',
      name,
    });
    await waitForSkyhookGone(h, name, 120_000);
  }, 300_000);
});
