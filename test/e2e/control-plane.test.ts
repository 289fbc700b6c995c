/**
 * The foundation: the sandbox starts a real control plane whose nodes, Jobs, evictions and garbage
 * collection behave as Kubernetes does, and stop() leaves no process behind.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  BatchV1Api,
  CoreV1Api,
  PolicyV1Api,
  ApiException,
  VersionApi,
  type V1Job,
  type V1Pod,
} from '@kubernetes/client-node';
import { readVersions } from '../../src/sandbox/binaries.js';
import { startControlPlane, type ControlPlane } from '../../src/sandbox/control-plane.js';
import { waitUntilGone } from '../../src/sandbox/processes.js';
import { waitForList } from '../../src/kube/wait.js';
import { SIM_ENV } from '../../src/sandbox/kwok-stages.js';

let cp: ControlPlane;
let core: CoreV1Api;
let batch: BatchV1Api;
const ns = 'foundation';

function job(name: string, node: string, env: Record<string, string> = {}): V1Job {
  return {
    metadata: { name, namespace: ns },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: 'Never',
          nodeSelector: { 'kubernetes.io/hostname': node },
          initContainers: [{ name: 'work', image: 'busybox:1.36' }],
          containers: [
            { name: 'main', image: 'busybox:1.36', env: Object.entries(env).map(([n, value]) => ({ name: n, value })) },
          ],
        },
      },
    },
  };
}

async function jobPods(name: string, done: (pods: V1Pod[]) => boolean): Promise<V1Pod[]> {
  return waitForList<V1Pod>(
    cp.kubeConfig,
    `/api/v1/namespaces/${ns}/pods?labelSelector=job-name%3D${name}`,
    done,
    60_000,
    `pods of job ${name}`,
  );
}

beforeAll(async () => {
  cp = await startControlPlane({ nodes: 3, podDurationMs: 300 });
  console.log(`control plane with 3 Ready nodes started in ${(cp.startupMs / 1000).toFixed(1)} s`);
  core = cp.kubeConfig.makeApiClient(CoreV1Api);
  batch = cp.kubeConfig.makeApiClient(BatchV1Api);
  await core.createNamespace({ body: { metadata: { name: ns } } });
}, 180_000);

afterAll(async () => {
  const pids = cp?.pids ?? [];
  await cp?.stop();
  // After stop(), none of the started processes remain.
  expect(await waitUntilGone(pids)).toEqual([]);
});

describe('local control plane', () => {
  it('runs the Kubernetes release SKYHOOK_K8S selects (tools/versions.env), its nodes reporting the same', async () => {
    const { k8s } = readVersions();
    expect((await cp.kubeConfig.makeApiClient(VersionApi).getCode()).gitVersion).toBe(k8s);
    const nodes = (await core.listNode()).items;
    expect(nodes.map((n) => n.status?.nodeInfo?.kubeletVersion)).toEqual(nodes.map(() => k8s));
  });

  it('has three Ready simulated nodes', async () => {
    const nodes = (await core.listNode()).items;
    expect(nodes.map((n) => n.metadata?.name).sort()).toEqual(['node-0', 'node-1', 'node-2']);
    for (const node of nodes) {
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
  });

  it('runs a Job pinned to one node to completion', async () => {
    await batch.createNamespacedJob({ namespace: ns, body: job('completes', 'node-1') });
    const [pod] = await jobPods('completes', (pods) => pods.some((p) => p.status?.phase === 'Succeeded'));
    expect(pod?.spec?.nodeName).toBe('node-1');
    expect(pod?.status?.initContainerStatuses?.[0]?.state?.terminated?.reason).toBe('Completed');
    await waitForList<V1Job>(
      cp.kubeConfig,
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      (jobs) => jobs.some((j) => j.metadata?.name === 'completes' && (j.status?.succeeded ?? 0) === 1),
      60_000,
    );
  });

  it('fails a Job whose container asks to exit 2, with exit code 2 in the pod status', async () => {
    await batch.createNamespacedJob({ namespace: ns, body: job('exits-2', 'node-2', { [SIM_ENV.exitCode]: '2' }) });
    const pods = await jobPods('exits-2', (all) => all.some((p) => p.status?.phase === 'Failed'));
    const failed = pods.find((p) => p.status?.phase === 'Failed');
    expect(failed?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(2);
    const jobs = await waitForList<V1Job>(
      cp.kubeConfig,
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      (all) =>
        all.some(
          (j) =>
            j.metadata?.name === 'exits-2' &&
            j.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True'),
        ),
      60_000,
    );
    const done = jobs.find((j) => j.metadata?.name === 'exits-2');
    expect(done?.status?.conditions).toContainEqual(expect.objectContaining({ type: 'Failed', status: 'True' }));
    expect(done?.status?.succeeded ?? 0).toBe(0);
  });

  it('refuses with HTTP 429 to evict a pod protected by a PodDisruptionBudget', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'protected', namespace: ns, labels: { app: 'protected' } },
        spec: { nodeName: 'node-0', containers: [{ name: 'app', image: 'nginx:1.27' }] },
      },
    });
    await cp.kubeConfig.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: {
        metadata: { name: 'protected', namespace: ns },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'protected' } } },
      },
    });
    await waitForList(
      cp.kubeConfig,
      `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`,
      (pdbs: { metadata?: { name?: string }; status?: { currentHealthy?: number; observedGeneration?: number } }[]) =>
        pdbs.some((p) => p.status?.currentHealthy === 1 && p.status.observedGeneration !== undefined),
      60_000,
      'PDB status',
    );
    const evict = core.createNamespacedPodEviction({
      name: 'protected',
      namespace: ns,
      body: {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'protected', namespace: ns },
      },
    });
    await expect(evict).rejects.toBeInstanceOf(ApiException);
    await evict.catch((e: unknown) => expect((e as ApiException<unknown>).code).toBe(429));
    // The pod is still there and running.
    expect((await core.readNamespacedPod({ name: 'protected', namespace: ns })).status?.phase).toBe('Running');
  });

  it('leaves a container with an unpullable image in ImagePullBackOff, and a bare pod Running', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'unpullable', namespace: ns },
        spec: { nodeName: 'node-2', containers: [{ name: 'app', image: 'registry.invalid/missing:1.0' }] },
      },
    });
    const [pod] = await waitForList<V1Pod>(
      cp.kubeConfig,
      `/api/v1/namespaces/${ns}/pods?fieldSelector=metadata.name%3Dunpullable`,
      (pods) => pods.some((p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff'),
      30_000,
    );
    expect(pod?.status?.phase).toBe('Pending');
    // The bare pod of the PDB case never completes on its own: only Job pods do.
    expect((await core.readNamespacedPod({ name: 'protected', namespace: ns })).status?.phase).toBe('Running');
  });

  it('deletes the pods of a deleted Job (the garbage collector runs)', async () => {
    await batch.createNamespacedJob({ namespace: ns, body: job('collected', 'node-0', { [SIM_ENV.duration]: '1h' }) });
    // The init container runs for an hour: the Job is still busy when it is deleted.
    await jobPods('collected', (pods) =>
      pods.some((p) => p.status?.initContainerStatuses?.[0]?.state?.running !== undefined),
    );
    await batch.deleteNamespacedJob({ name: 'collected', namespace: ns, propagationPolicy: 'Background' });
    const left = await jobPods('collected', (pods) => pods.length === 0);
    expect(left).toEqual([]);
  });
});
