/**
 * What happens to stage Jobs, through the real operator on 2 nodes (newer upstream's Job handling):
 *   - pausing an SCR suspends its running Jobs (their pods stop); a held NodeOp whose Job does not
 *     exist yet gets it created suspended; resuming finishes the same Jobs, and a suspension is not
 *     counted as a failure;
 *   - finished Jobs are kept 1 h after success and 24 h after failure (ttlSecondsAfterFinished);
 *   - a failed stage leaves a Warning Event on the SCR with the failed container, its exit code and
 *     the tail of its log, shown by `kubectl describe skyhook`;
 *   - a package's gracefulShutdown is the terminationGracePeriodSeconds of its stage pods.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BatchV1Api, type CoreV1Event, type V1Job, type V1Pod } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  CHILD_LABELS,
  GROUP_VERSION,
  KUBERNETES_NAMES,
  nodeAnnotations,
  NODEOP_NAMES,
  SKYHOOK_ANNOTATIONS,
  STAGE_OP_ANNOTATIONS,
} from '../../src/api/names.js';
import type { NodeOp } from '../../src/api/nodeop.js';
import type { Package } from '../../src/api/skyhook.js';
import { STAGE_FAILED_REASON } from '../../src/controllers/skyhook/write/failed-stage-report.js';
import { parseNodeState } from '../../src/api/node-state.js';
import { mergePatchCustomObject } from '../../src/kube/client.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { waitForList } from '../../src/kube/wait.js';
import { SIM_ENV, SIMULATED_LOG_LINE } from '../../src/sandbox/kwok-stages.js';
import {
  createSkyhook,
  DEMO_LABEL,
  demoNodes,
  kubectlOk,
  listNodes,
  NAMESPACE,
  recordStageJobs,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';

let h: SkyhookHarness;
let batch: BatchV1Api;
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
const JOBS_PATH = `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`;
const NODEOPS_PATH = `/apis/${API_GROUP}/${API_VERSION}/namespaces/${NAMESPACE}/nodeops`;
const PODS_PATH = `/api/v1/namespaces/${NAMESPACE}/pods`;
const HOUR = 3600;

beforeAll(async () => {
  // One attempt per Job: a failing stage gives up at once instead of after the Job controller's backoff.
  h = await startSkyhookHarness(demoNodes(2, 0), { skyhook: { settings: { jobBackoffLimit: 0 } } });
  batch = h.cp.kubeConfig.makeApiClient(BatchV1Api);
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const ofSkyhook =
  (name: string) =>
  (job: V1Job): boolean =>
    job.metadata?.labels?.[CHILD_LABELS.name] === name;
const finished = (job: V1Job): boolean =>
  job.status?.conditions?.some((c) => ['Complete', 'Failed'].includes(c.type) && c.status === 'True') ?? false;
const skyhookRef = (name: string) => ({ group: API_GROUP, version: API_VERSION, plural: 'skyhooks', name });
/**
 * The stage pods of a Skyhook that run (Running, not being deleted). Read from the pods, not from
 * the Job's `status.active`: the NodeOp controller runs its Jobs' pods itself and writes a Job's
 * status only when it ends (jobs/job-runner/).
 */
const runningPods = (name: string, pods: V1Pod[]): V1Pod[] =>
  pods.filter(
    (p) =>
      p.metadata?.labels?.[CHILD_LABELS.name] === name &&
      p.status?.phase === 'Running' &&
      !p.metadata?.deletionTimestamp,
  );

describe('pause', () => {
  it('suspends the running stage Jobs, and resuming finishes the same Jobs without a failure', async () => {
    const jobs = await recordStageJobs(h);
    // Long enough (about 8 s per Job) for the pause to land while the apply Jobs run.
    const pkg: Package = { version: '1.0.0', image: IMAGE, env: [{ name: SIM_ENV.duration, value: '4s' }] };
    await createSkyhook(h, {
      metadata: { name: 'pausing' },
      spec: { nodeSelectors: { matchLabels: DEMO_LABEL }, packages: { slow: pkg } },
    });
    await waitForList<V1Pod>(
      h.cp.kubeConfig,
      PODS_PATH,
      (all) => runningPods('pausing', all).length === 2,
      60_000,
      'both apply Jobs running',
    );

    await mergePatchCustomObject(h.custom, skyhookRef('pausing'), {
      metadata: { annotations: { [SKYHOOK_ANNOTATIONS.pause]: 'true' } },
    });
    const suspended = await waitForList<V1Job>(
      h.cp.kubeConfig,
      JOBS_PATH,
      (all) => {
        const ours = all.filter(ofSkyhook('pausing'));
        return ours.length === 2 && ours.every((j) => j.spec?.suspend === true && !finished(j));
      },
      60_000,
      'apply Jobs suspended',
    );
    await waitForList<V1Pod>(
      h.cp.kubeConfig,
      PODS_PATH,
      (all) => runningPods('pausing', all).length === 0,
      60_000,
      'no pod of the suspended Jobs running',
    );
    expect(suspended.filter(ofSkyhook('pausing')).map((j) => j.metadata?.labels?.[CHILD_LABELS.stage])).toEqual([
      'apply',
      'apply',
    ]);
    const paused = await waitForSkyhook(h, 'pausing', (scr) => scr.status?.status === 'paused');
    expect(paused.status?.nodeStatus).toEqual({ 'demo-0': 'paused', 'demo-1': 'paused' });
    const ops = await waitForList<NodeOp>(
      h.cp.kubeConfig,
      NODEOPS_PATH,
      (all) =>
        all
          .filter((op) => op.spec.skyhookStage?.skyhook === 'pausing')
          .every((op) => op.metadata.annotations?.[STAGE_OP_ANNOTATIONS.suspended] === 'true'),
      30_000,
      'ops marked suspended',
    );
    expect(ops.filter((op) => op.spec.skyhookStage?.skyhook === 'pausing')).toHaveLength(2);

    await mergePatchCustomObject(h.custom, skyhookRef('pausing'), {
      metadata: { annotations: { [SKYHOOK_ANNOTATIONS.pause]: null } },
    });
    const done = await waitForSkyhook(h, 'pausing', (scr) => scr.status?.status === 'complete');
    await jobs.stop();
    expect(done.status).toMatchObject({ completeNodes: '2/2', nodesInProgress: 0 });
    // The suspended apply Jobs were resumed, not replaced: one Job per node and stage, all succeeded.
    expect(jobs.stagesByNode('pausing')).toEqual({ 'demo-0': ['apply', 'config'], 'demo-1': ['apply', 'config'] });
    expect([...jobs.jobs.values()].every((job) => job.succeeded && !job.failed)).toBe(true);
    for (const node of (await listNodes(h)).filter((n) => n.metadata?.name?.startsWith('demo-'))) {
      const entry = parseNodeState(node.metadata?.annotations?.[nodeAnnotations.nodeState('pausing')] ?? '{}')[
        'slow|1.0.0'
      ];
      expect(entry).toEqual({ name: 'slow', version: '1.0.0', image: IMAGE, stage: 'config', state: 'complete' });
    }

    // Succeeded Jobs are kept for an hour.
    const kept = (
      await batch.listNamespacedJob({ namespace: NAMESPACE, labelSelector: `${CHILD_LABELS.name}=pausing` })
    ).items;
    expect(kept).toHaveLength(4);
    for (const job of kept) expect(job.spec?.ttlSecondsAfterFinished).toBe(HOUR);
  }, 150_000);

  it('creates the Job of a held NodeOp suspended, and runs it once the hold is lifted', async () => {
    const body = {
      apiVersion: GROUP_VERSION,
      kind: 'NodeOp',
      metadata: { name: 'held', namespace: NAMESPACE, annotations: { [STAGE_OP_ANNOTATIONS.suspended]: 'true' } },
      spec: { targetNodes: ['demo-0'], command: ['/bin/sh', '-c', 'true'] },
    };
    await h.custom.createNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: 'nodeops',
      namespace: NAMESPACE,
      body,
    });
    const ofHeld = (job: V1Job): boolean => job.metadata?.labels?.[NODEOP_NAMES.nodeOpLabel] === 'held';
    const created = await waitForList<V1Job>(
      h.cp.kubeConfig,
      JOBS_PATH,
      (all) => all.some(ofHeld),
      30_000,
      'Job of the held NodeOp',
    );
    const job = created.find(ofHeld)!;
    expect(job.spec?.suspend).toBe(true);
    const pods = await h.core.listNamespacedPod({
      namespace: NAMESPACE,
      labelSelector: `${KUBERNETES_NAMES.jobNameLabel}=${job.metadata?.name ?? ''}`,
    });
    expect(pods.items).toEqual([]);

    await mergePatchCustomObject(
      h.custom,
      { group: API_GROUP, version: API_VERSION, plural: 'nodeops', namespace: NAMESPACE, name: 'held' },
      { metadata: { annotations: { [STAGE_OP_ANNOTATIONS.suspended]: null } } },
    );
    const ops = await waitForList<NodeOp>(
      h.cp.kubeConfig,
      NODEOPS_PATH,
      (all) => all.some((op) => op.metadata.name === 'held' && op.status?.phase === 'Completed'),
      60_000,
      'held NodeOp completed',
    );
    expect(ops.find((op) => op.metadata.name === 'held')?.status?.nodeStatuses?.['demo-0']?.jobName).toBe(
      job.metadata?.name,
    );
    const after = await batch.readNamespacedJob({ name: job.metadata?.name ?? '', namespace: NAMESPACE });
    expect(after.metadata?.uid).toBe(job.metadata?.uid);
    expect(after.spec?.suspend).toBe(false);
  }, 90_000);
});

describe('a failed stage', () => {
  it('keeps its Job for a day and tells `kubectl describe skyhook` which container failed, how, and its log tail', async () => {
    const env = [
      { name: SIM_ENV.exitCode, value: '2' },
      { name: SIM_ENV.failNode, value: 'demo-1' },
    ];
    await createSkyhook(h, {
      metadata: { name: 'failing' },
      spec: {
        nodeSelectors: { matchLabels: DEMO_LABEL },
        packages: { broken: { version: '1.0.0', image: IMAGE, env } },
      },
    });
    const events = await waitForList<CoreV1Event>(
      h.cp.kubeConfig,
      '/api/v1/events',
      (all) => all.some((e) => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === 'failing'),
      90_000,
      'StageFailed event on the SCR',
    );
    const event = events.find((e) => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === 'failing')!;
    expect(event.type).toBe('Warning');
    expect(event.involvedObject.kind).toBe('Skyhook');
    expect(event.message).toContain(
      'Package [broken:1.0.0] stage [apply] failed on node [demo-1]: container broken-apply exited with code 2',
    );
    expect(event.message).toContain(`log tail: ${SIMULATED_LOG_LINE}`);

    const described = await kubectlOk(h, ['describe', 'skyhook', 'failing']);
    expect(described).toContain(STAGE_FAILED_REASON);
    expect(described).toContain('container broken-apply exited with code 2');

    const failedJobs = (
      await batch.listNamespacedJob({
        namespace: NAMESPACE,
        labelSelector: `${CHILD_LABELS.name}=failing,${CHILD_LABELS.node}=demo-1`,
      })
    ).items.filter(finished);
    expect(failedJobs.length).toBeGreaterThan(0);
    for (const job of failedJobs) expect(job.spec?.ttlSecondsAfterFinished).toBe(24 * HOUR);
    const settled = await waitForSkyhook(
      h,
      'failing',
      (scr) => scr.status?.nodeStatus?.['demo-0'] === 'complete' && scr.status.nodeStatus['demo-1'] === 'erroring',
    );
    expect(settled.status?.status).toBe('erroring');
  }, 150_000);
});

describe('stageTimeout', () => {
  it('ends a stage that runs longer as a failed Job (DeadlineExceeded): the package is erroring and the Events say it timed out', async () => {
    const pkg: Package = {
      version: '1.0.0',
      image: IMAGE,
      stageTimeout: '2s',
      env: [{ name: SIM_ENV.duration, value: '60s' }],
    };
    await createSkyhook(h, {
      metadata: { name: 'timeout' },
      spec: { nodeSelectors: { matchLabels: { 'kubernetes.io/hostname': 'demo-0' } }, packages: { sleepy: pkg } },
    });
    const events = await waitForList<CoreV1Event>(
      h.cp.kubeConfig,
      '/api/v1/events',
      (all) => all.some((e) => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === 'timeout'),
      60_000,
      'StageFailed event on the SCR',
    );
    expect(
      events.find((e) => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === 'timeout')?.message,
    ).toMatch(/^Package \[sleepy:1.0.0\] stage \[apply\] failed on node \[demo-0\]: .*DeadlineExceeded/);
    const erroring = await waitForSkyhook(h, 'timeout', (scr) => scr.status?.nodeStatus?.['demo-0'] === 'erroring');
    expect(erroring.status?.nodeState?.['demo-0']?.['sleepy|1.0.0']).toMatchObject({
      stage: 'apply',
      state: 'erroring',
    });
    const nodeEvents = await waitForList<CoreV1Event>(
      h.cp.kubeConfig,
      '/api/v1/events',
      (all) =>
        all.some(
          (e) =>
            e.involvedObject.kind === 'Node' &&
            (e.message ?? '').includes('[skyhook:timeout] stage [apply] (stage timed out)'),
        ),
      30_000,
      'timed-out State event on the node',
    );
    expect(nodeEvents.length).toBeGreaterThan(0);
  }, 90_000);
});

describe('gracefulShutdown', () => {
  it("is the terminationGracePeriodSeconds of the package's stage pods", async () => {
    // Every pod of the Skyhook as the watch saw it: they are deleted once their stage is done.
    const seen = new Map<string, V1Pod>();
    const pods = new Informer<V1Pod>(apiListWatch(h.cp.kubeConfig, PODS_PATH), {
      resource: 'graceful-pods',
      logger: silentLogger(),
    });
    const keep = (pod: V1Pod): void => {
      if (pod.metadata?.labels?.[CHILD_LABELS.name] === 'graceful') seen.set(pod.metadata?.name ?? '', pod);
    };
    pods.on({ add: keep, update: keep });
    pods.start();
    try {
      await createSkyhook(h, {
        metadata: { name: 'graceful' },
        spec: {
          // Ahead of `failing` (priority 200, an earlier name), which stays erroring on demo-1 and
          // would hold any Skyhook of its priority and a later name behind it there.
          priority: 1,
          nodeSelectors: { matchLabels: { 'kubernetes.io/hostname': 'demo-1' } },
          packages: {
            tuned: { version: '1.0.0', image: IMAGE, gracefulShutdown: '46s' },
          },
        },
      });
      await waitForSkyhook(h, 'graceful', (scr) => scr.status?.status === 'complete', 120_000);
      // (This harness has no simulated host for reboots: the reboot pod's grace period is unit-tested,
      // test/unit/templates/templates.test.ts.)
      const all = [...seen.values()];
      // apply and config each ran a pod.
      expect(new Set(all.map((p) => p.metadata?.labels?.[CHILD_LABELS.stage]))).toEqual(new Set(['apply', 'config']));
      for (const pod of all)
        expect([pod.metadata?.name, pod.spec?.terminationGracePeriodSeconds]).toEqual([pod.metadata?.name, 46]);
    } finally {
      await pods.stop();
    }
  }, 150_000);
});
