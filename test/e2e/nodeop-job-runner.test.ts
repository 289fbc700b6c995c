/**
 * The stage Jobs the NodeOp controller runs itself (`spec.managedBy`, jobs/job-runner/) against the
 * real control plane, whose Job controller is running and must leave them alone: the API server
 * accepts the final status it writes, a failed pod is retried after the backoff until backoffLimit,
 * the TTL-after-finished controller still cleans up, an attempt the node's own reboot cut off is not
 * retried when the reboot pod says the Job had finished, and NODEOP_JOB_RUNNER=kubernetes hands the
 * Jobs back to the Job controller.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { KUBERNETES_NAMES, NODEOP_NAMES } from '../../src/api/names.js';
import type { NodeOpSpec } from '../../src/api/nodeop.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { waitForList } from '../../src/kube/wait.js';
import { MERGE_PATCH, mergePatchNodeStatus } from '../../src/kube/client.js';
import { SIM_ENV } from '../../src/sandbox/kwok-stages.js';
import { rebootPodName } from '../../src/templates/object-names.js';
import {
  createNamespace,
  createNodeOp,
  startNodeOpHarness,
  waitForNodeOp,
  type NodeOpHarness,
} from './nodeop-harness.js';

/** The field manager of kube-controller-manager's writes (the Job controller's among them). */
const JOB_CONTROLLER_MANAGER = 'kube-controller-manager';
const TTL_SECONDS = 10;

let h: NodeOpHarness;

beforeAll(async () => {
  h = await startNodeOpHarness([{ name: 'j-1' }, { name: 'j-2' }, { name: 'j-3' }, { name: 'j-4' }], {
    settings: { jobTtlSucceededSeconds: TTL_SECONDS },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const spec = (node: string, extra: Partial<NodeOpSpec> = {}): NodeOpSpec => ({
  targetNodes: [node],
  image: 'busybox:1.37',
  command: ['/bin/sh', '-c', 'echo hello from $NODE_NAME'],
  ...extra,
});

/** Every state each Job of the namespace was seen in, kept after the Job is deleted. */
async function recordJobs(
  namespace: string,
): Promise<{ last: Map<string, V1Job>; deleted: Set<string>; stop(): Promise<void> }> {
  const informer = new Informer<V1Job>(apiListWatch(h.cp.kubeConfig, `/apis/batch/v1/namespaces/${namespace}/jobs`), {
    resource: `jobs-${namespace}`,
    logger: silentLogger(),
  });
  const last = new Map<string, V1Job>();
  const deleted = new Set<string>();
  const keep = (job: V1Job): void => void last.set(job.metadata?.name ?? '', job);
  informer.on({ add: keep, update: keep, delete: (job) => deleted.add(job.metadata?.name ?? '') });
  informer.start();
  await informer.waitForSync(30_000);
  return { last, deleted, stop: () => informer.stop() };
}

async function podsOf(namespace: string, jobName: string): Promise<V1Pod[]> {
  const list = await h.core.listNamespacedPod({
    namespace,
    labelSelector: `${KUBERNETES_NAMES.jobNameLabel}=${jobName}`,
  });
  return list.items.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}

const managers = (job: V1Job | undefined): string[] => (job?.metadata?.managedFields ?? []).map((f) => f.manager ?? '');
const trueConditions = (job: V1Job | undefined): string[] =>
  (job?.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => `${c.type}:${c.reason ?? ''}`);

describe('a Job the NodeOp controller runs', () => {
  it('runs one pod, writes a final status the API server accepts, untouched by the Job controller, and the TTL controller still deletes it', async () => {
    const ns = 'runner-ok';
    await createNamespace(h, ns);
    const jobs = await recordJobs(ns);
    await createNodeOp(h, ns, 'ok', spec('j-1'));
    const done = await waitForNodeOp(h, ns, 'ok', (op) => op.status?.phase === 'Completed');
    const jobName = done.status?.nodeStatuses?.['j-1']?.jobName ?? '';
    const pods = await podsOf(ns, jobName);
    await waitForList<V1Job>(
      h.cp.kubeConfig,
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      (list) => list.every((j) => j.metadata?.name !== jobName),
      60_000,
      'the TTL-after-finished controller deleting the Job',
    );
    // The recorder's own watch may deliver the deletion a moment after the list stopped showing the Job.
    for (const until = Date.now() + 10_000; !jobs.deleted.has(jobName) && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 100));
    await jobs.stop();

    const job = jobs.last.get(jobName);
    expect(job?.spec?.managedBy).toBe(NODEOP_NAMES.jobManager);
    expect(trueConditions(job)).toEqual(['SuccessCriteriaMet:CompletionsReached', 'Complete:CompletionsReached']);
    // Zero counts are omitted by the API server.
    expect([job?.status?.succeeded, job?.status?.failed ?? 0, job?.status?.active ?? 0]).toEqual([1, 0, 0]);
    expect(job?.status?.startTime).toBeDefined();
    expect(job?.status?.completionTime).toBeDefined();
    // The Job controller never wrote it: all its status is ours.
    expect(managers(job)).not.toContain(JOB_CONTROLLER_MANAGER);
    // One pod, attempt 0, owned by the Job, without the Job controller's tracking finalizer.
    expect(pods.map((p) => p.metadata?.name)).toEqual([`${jobName}-0`]);
    expect(pods[0]?.status?.phase).toBe('Succeeded');
    expect(pods[0]?.metadata?.finalizers ?? []).toEqual([]);
    expect(pods[0]?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Job', name: jobName, uid: job?.metadata?.uid, controller: true }),
    ]);
    expect(jobs.deleted.has(jobName)).toBe(true);
    // Its pod goes with it (garbage collection follows the owner reference).
    await waitForList<V1Pod>(
      h.cp.kubeConfig,
      `/api/v1/namespaces/${ns}/pods`,
      (list) => list.length === 0,
      60_000,
      "the Job's pod garbage-collected",
    );
  }, 120_000);

  it('retries a failed pod after the 10 s backoff, and fails the Job (BackoffLimitExceeded) once more than backoffLimit failed', async () => {
    const ns = 'runner-retry';
    await createNamespace(h, ns);
    await createNodeOp(h, ns, 'retry', spec('j-2', { backoffLimit: 1, env: [{ name: SIM_ENV.exitCode, value: '3' }] }));
    const failed = await waitForNodeOp(h, ns, 'retry', (op) => op.status?.phase === 'Failed', 90_000);
    const entry = failed.status?.nodeStatuses?.['j-2'];
    const jobName = entry?.jobName ?? '';
    const job = await h.batch.readNamespacedJob({ name: jobName, namespace: ns });
    const pods = await podsOf(ns, jobName);

    expect(pods.map((p) => [p.metadata?.name, p.status?.phase])).toEqual([
      [`${jobName}-0`, 'Failed'],
      [`${jobName}-1`, 'Failed'],
    ]);
    const firstEnded = Math.max(
      ...(pods[0]?.status?.containerStatuses ?? []).map((c) =>
        new Date(c.state?.terminated?.finishedAt ?? 0).getTime(),
      ),
    );
    const retried = new Date(pods[1]?.metadata?.creationTimestamp ?? 0).getTime();
    // Times are kept to the second: 10 s of backoff shows as at least 9.
    expect(retried - firstEnded).toBeGreaterThanOrEqual(9_000);
    expect(trueConditions(job)).toEqual(['FailureTarget:BackoffLimitExceeded', 'Failed:BackoffLimitExceeded']);
    expect(job.status?.failed).toBe(2);
    expect(managers(job)).not.toContain(JOB_CONTROLLER_MANAGER);
    expect(entry?.restarts).toBe(2);
    expect(entry?.message).toMatch(/BackoffLimitExceeded/);
    expect(entry?.message).toMatch(/exited with code 3/);
  }, 120_000);
});

describe("an attempt of a Job the node's own reboot cut off", () => {
  it('is not retried when the reboot pod saw the sentinel: the Job completes with its one pod and the node reboots once', async () => {
    const ns = 'runner-lost';
    await createNamespace(h, ns);
    // The attempt reads as failed, as a pod the reboot cut off does after the boot; backoffLimit would retry it.
    const env = [
      { name: SIM_ENV.duration, value: '3s' },
      { name: SIM_ENV.exitCode, value: '1' },
    ];
    await createNodeOp(h, ns, 'lost', spec('j-4', { rebootOnSuccess: true, backoffLimit: 3, env }));
    const running = await waitForNodeOp(h, ns, 'lost', (op) => op.status?.nodeStatuses?.['j-4']?.phase === 'Running');
    const jobName = running.status?.nodeStatuses?.['j-4']?.jobName ?? '';
    // Before the attempt ends: the node booted again, and its reboot pod, restarted by the boot, found
    // its marker of having run the interrupt and exited 0 (what it does only after seeing the sentinel).
    await mergePatchNodeStatus(h.core, 'j-4', { nodeInfo: { bootID: 'boot-after-the-cut-off' } });
    const rebootPod = rebootPodName(jobName);
    const read = await h.core.readNamespacedPod({ name: rebootPod, namespace: ns });
    const terminated = (exitCode: number) => ({ terminated: { exitCode, finishedAt: new Date() } });
    await h.core.patchNamespacedPodStatus(
      {
        name: rebootPod,
        namespace: ns,
        body: {
          status: {
            phase: 'Succeeded',
            containerStatuses: [
              {
                name: read.spec?.containers[0]?.name ?? '',
                image: read.spec?.containers[0]?.image ?? '',
                imageID: '',
                ready: false,
                restartCount: 1,
                state: terminated(0),
                lastState: terminated(143),
              },
            ],
          },
        },
      },
      MERGE_PATCH,
    );
    const done = await waitForNodeOp(
      h,
      ns,
      'lost',
      (op) => ['Completed', 'Failed'].includes(op.status?.phase ?? ''),
      90_000,
    );
    const entry = done.status?.nodeStatuses?.['j-4'];
    expect(done.status?.phase).toBe('Completed');
    expect(entry?.rebootStatus).toBe('completed');
    const pods = await podsOf(ns, jobName);
    // No second attempt ran the steps again.
    expect(pods.map((p) => [p.metadata?.name, p.status?.phase])).toEqual([[`${jobName}-0`, 'Failed']]);
    const job = await h.batch.readNamespacedJob({ name: jobName, namespace: ns });
    expect(trueConditions(job)).toEqual(['SuccessCriteriaMet:CompletionsReached', 'Complete:CompletionsReached']);
    expect(job.status?.conditions?.find((c) => c.type === 'Complete')?.message).toMatch(
      /cut off by the node's reboot after its last step succeeded/,
    );
    // The simulated host never rebooted the node a second time for this Job.
    expect(h.host.interrupts.filter((i) => i.job === jobName)).toEqual([]);
  }, 120_000);
});

describe('NODEOP_JOB_RUNNER=kubernetes', () => {
  it("leaves the Jobs to Kubernetes' Job controller", async () => {
    await h.restartOperator({ jobRunner: 'kubernetes' });
    try {
      const ns = 'runner-builtin';
      await createNamespace(h, ns);
      await createNodeOp(h, ns, 'builtin', spec('j-3'));
      const done = await waitForNodeOp(h, ns, 'builtin', (op) => op.status?.phase === 'Completed');
      const jobName = done.status?.nodeStatuses?.['j-3']?.jobName ?? '';
      const job = await waitForList<V1Job>(
        h.cp.kubeConfig,
        `/apis/batch/v1/namespaces/${ns}/jobs`,
        (list) =>
          list.some((j) => j.metadata?.name === jobName && trueConditions(j).some((c) => c.startsWith('Complete'))),
        30_000,
        'the Job complete',
      ).then((list) => list.find((j) => j.metadata?.name === jobName));
      expect(job?.spec?.managedBy).toBeUndefined();
      expect(managers(job)).toContain(JOB_CONTROLLER_MANAGER);
      const pods = await podsOf(ns, jobName);
      expect(pods).toHaveLength(1);
      expect(pods[0]?.metadata?.name).not.toBe(`${jobName}-0`);
    } finally {
      await h.restartOperator();
    }
  }, 120_000);
});
