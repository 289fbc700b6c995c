/**
 * What upstream's packages and tools look at, through the real operator (issue 19):
 *   - the node-metadata ConfigMap each stage Job mounts holds the node's `nodeState_<scr>` and
 *     `status_<scr>` as they announce that very stage, in Go's JSON bytes, and is written once per
 *     stage, only when its content changed;
 *   - every reconciled Skyhook carries `skyhook.nvidia.com/version` (the operator's version), set by
 *     a metadata patch that leaves the generation alone;
 *   - under a LimitRange every container of a stage Job's pod has exactly the package's resources;
 *   - deleting Skyhooks (complete ones and one mid-rollout) logs no error.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  CHILD_ANNOTATIONS,
  CHILD_LABELS,
  nodeAnnotations,
  nodeLabels,
  SKYHOOK_ANNOTATIONS,
} from '../../src/api/names.js';
import type { NodeOp } from '../../src/api/nodeop.js';
import { packageVersion } from '../../src/api/operator-version.js';
import type { Package, Skyhook } from '../../src/api/skyhook.js';
import { mergePatchCustomObject, mergePatchNode } from '../../src/kube/client.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { createLogger, silentLogger } from '../../src/kube/logger.js';
import { SIM_ENV } from '../../src/sandbox/kwok-stages.js';
import { retryOnConflict } from './conflict-retry.js';
import {
  createGroupSkyhook,
  groupNodes,
  kubectlOk,
  NAMESPACE,
  startSkyhookHarness,
  waitForSkyhook,
  waitForSkyhookGone,
  type SkyhookHarness,
} from './skyhook-harness.js';

const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
const VERSION = `v${packageVersion()}`;
/** Every line the operator logs, as pino writes it. */
const logLines: string[] = [];
let h: SkyhookHarness;

beforeAll(async () => {
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void logLines.push(line) } });
  h = await startSkyhookHarness(
    [...groupNodes('meta', 2), ...groupNodes('res', 1), ...groupNodes('del', 1), ...groupNodes('drop', 1)],
    { logger },
  );
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const readSkyhook = async (name: string): Promise<Skyhook> =>
  (await h.custom.getClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: 'skyhooks',
    name,
  })) as Skyhook;

/** Every version of `kind` objects in the operator namespace seen from now on, as watch events bring them. */
async function recordVersions<T extends V1ConfigMap | NodeOp>(
  path: string,
  keep: (object: T) => boolean,
): Promise<{ seen: T[]; stop(): Promise<void> }> {
  const informer = new Informer<T>(apiListWatch(h.cp.kubeConfig, path), { resource: path, logger: silentLogger() });
  const seen: T[] = [];
  const note = (object: T): void => {
    if (informer.synced && keep(object)) seen.push(object);
  };
  informer.on({ add: note, update: note });
  informer.start();
  await informer.waitForSync(30_000);
  return { seen, stop: () => informer.stop() };
}

const rv = (object: V1ConfigMap | NodeOp): bigint => BigInt(object.metadata?.resourceVersion ?? '0');

describe('node-metadata ConfigMaps', () => {
  it("give each stage the node's own state and status as upstream writes them, in Go's bytes, written once per stage", async () => {
    await mergePatchNode(h.core, 'meta-0', { metadata: { annotations: { 'example.com/html': 'a<b>&c' } } });
    const cms = await recordVersions<V1ConfigMap>(
      `/api/v1/namespaces/${NAMESPACE}/configmaps`,
      (cm) => cm.metadata?.labels?.[CHILD_LABELS.nodeMeta] === 'compat',
    );
    const ops = await recordVersions<NodeOp>(
      `/apis/${API_GROUP}/${API_VERSION}/namespaces/${NAMESPACE}/nodeops`,
      (op) => op.spec.skyhookStage?.skyhook === 'compat',
    );
    await createGroupSkyhook(h, 'compat', 'meta', { packages: { pkg: { version: '1.0.0', image: IMAGE } } });
    await waitForSkyhook(h, 'compat', (scr) => scr.status?.status === 'complete' && scr.status.completeNodes === '2/2');
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // any late rewrite would show by now
    await Promise.all([cms.stop(), ops.stop()]);

    for (const node of ['meta-0', 'meta-1']) {
      const versions = cms.seen.filter((cm) => cm.metadata?.annotations?.[CHILD_ANNOTATIONS.nodeName] === node);
      // Each op's creation: the first version seen of it (the watch's ADDED event).
      const created = new Map<string, NodeOp>();
      for (const op of ops.seen)
        if (op.spec.targetNodes?.[0] === node && !created.has(op.spec.skyhookStage!.stage))
          created.set(op.spec.skyhookStage!.stage, op);
      expect([...created.keys()]).toEqual(['apply', 'config']);
      for (const [stage, op] of created) {
        // What the Job mounts: the ConfigMap as it was when its NodeOp was created (one etcd revision counter orders both).
        const mounted = versions.filter((cm) => rv(cm) < rv(op)).at(-1);
        const annotations = mounted?.data?.['annotations.json'] ?? '';
        const state = `{"pkg|1.0.0":{"name":"pkg","version":"1.0.0","image":"${IMAGE}","stage":"${stage}","state":"in_progress"}}`;
        // The annotation's value as a Go JSON string: quotes escaped, nothing else to escape here.
        expect(annotations).toContain(`"${nodeAnnotations.nodeState('compat')}":${JSON.stringify(state)}`);
        expect(annotations).toContain(`"${nodeAnnotations.status('compat')}":"in_progress"`);
        expect(annotations).toContain(`"${nodeAnnotations.version('compat')}":"${VERSION}"`);
        expect(annotations).not.toMatch(/recordedOps_|waiting_|cordoned-by/);
        expect(mounted?.data?.['labels.json']).toContain(`"${nodeLabels.status('compat')}":"in_progress"`);
        // Go's encoding: compact, keys sorted by bytes, <, > and & escaped.
        for (const file of ['annotations.json', 'labels.json']) {
          const text = mounted?.data?.[file] ?? '';
          const keys = Object.keys(JSON.parse(text) as Record<string, string>);
          expect(keys).toEqual([...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
          expect(text).toBe(
            JSON.stringify(JSON.parse(text)).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026'),
          );
        }
        if (node === 'meta-0') expect(annotations).toContain('"example.com/html":"a\\u003cb\\u003e\\u0026c"');
      }
      // Written before each of the two stages and never again: only when its content changed.
      expect(versions).toHaveLength(2);
    }
  }, 90_000);
});

describe('the operator version annotation', () => {
  it('is on every reconciled Skyhook, put back when changed, by a metadata patch that leaves the generation alone', async () => {
    const scr = await readSkyhook('compat');
    expect(scr.metadata.annotations?.[SKYHOOK_ANNOTATIONS.version]).toBe(VERSION);
    expect(scr.metadata.generation).toBe(1);
    await mergePatchCustomObject(
      h.custom,
      { group: API_GROUP, version: API_VERSION, plural: 'skyhooks', name: 'compat' },
      { metadata: { annotations: { [SKYHOOK_ANNOTATIONS.version]: 'v0.0.1' } } },
    );
    const restamped = await waitForSkyhook(
      h,
      'compat',
      (s) => s.metadata.annotations?.[SKYHOOK_ANNOTATIONS.version] === VERSION,
      30_000,
    );
    expect(restamped.metadata.generation).toBe(1);
    expect(restamped.status?.status).toBe('complete');
  }, 60_000);
});

describe('package resources under a LimitRange', () => {
  it("give every container of the stage Jobs' pods exactly the package's requests and limits", async () => {
    const defaults = { cpu: '500m', memory: '256Mi' };
    await h.core.createNamespacedLimitRange({
      namespace: NAMESPACE,
      body: {
        metadata: { name: 'defaults' },
        spec: { limits: [{ type: 'Container', _default: defaults, defaultRequest: defaults }] },
      },
    });
    try {
      const pkg: Package = {
        version: '1.0.0',
        image: IMAGE,
        resources: { cpuRequest: '50m', cpuLimit: '100m', memoryRequest: '32Mi', memoryLimit: '64Mi' },
      };
      await createGroupSkyhook(h, 'res', 'res', { packages: { small: pkg } });
      await waitForSkyhook(h, 'res', (scr) => scr.status?.status === 'complete');
      const pods: V1Pod[] = (
        await h.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `${CHILD_LABELS.name}=res` })
      ).items;
      expect(pods.map((pod) => pod.metadata?.labels?.[CHILD_LABELS.stage]).sort()).toEqual(['apply', 'config']);
      const want = { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '100m', memory: '64Mi' } };
      for (const pod of pods) {
        const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
        expect(containers.map((c) => c.name)).toContain('small-init');
        for (const container of containers)
          expect({ container: container.name, resources: container.resources }).toEqual({
            container: container.name,
            resources: want,
          });
      }
    } finally {
      await h.core.deleteNamespacedLimitRange({ name: 'defaults', namespace: NAMESPACE });
    }
  }, 90_000);
});

describe('deleting Skyhooks', () => {
  it('logs no error: complete ones, one in the middle of its rollout, and one whose finalizer a replace dropped', async () => {
    const slow: Package = { version: '1.0.0', image: IMAGE, env: [{ name: SIM_ENV.duration, value: '3s' }] };
    await createGroupSkyhook(h, 'midway', 'del', { packages: { slow } });
    await createGroupSkyhook(h, 'dropped', 'drop', { packages: { slow } });
    for (const name of ['midway', 'dropped'])
      await waitForSkyhook(h, name, (scr) => scr.status?.status === 'in_progress', 30_000);
    const from = logLines.length;
    // A replace from a manifest drops the finalizer; deleted right after, the SCR goes at once, under the operator's feet.
    // The operator writes the status of the rollout under way: one landing between the read and the
    // replace makes the replace a Conflict, and it is read and made again, as a tool would.
    const ref = { group: API_GROUP, version: API_VERSION, plural: 'skyhooks', name: 'dropped' };
    await retryOnConflict(async () => {
      const live = (await h.custom.getClusterCustomObject(ref)) as Skyhook;
      const replaced = {
        apiVersion: live.apiVersion,
        kind: live.kind,
        metadata: { name: 'dropped', resourceVersion: live.metadata.resourceVersion },
        spec: { ...live.spec, priority: 7 },
      };
      await h.custom.replaceClusterCustomObject({ ...ref, body: replaced });
    });
    await kubectlOk(h, ['delete', 'skyhook', 'dropped', 'midway', 'compat', 'res', '--wait=false']);
    for (const name of ['dropped', 'midway', 'compat', 'res']) await waitForSkyhookGone(h, name);
    // Requeues and late events of the deleted SCRs come within a few seconds.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const lines = logLines
      .slice(from)
      .map((line) => JSON.parse(line) as { level: number; msg: string; skyhook?: string; err?: string });
    // The log is the operator's (each finalized SCR says so); 'dropped' too if its finalizer was back before the delete.
    const finalized = lines.filter((line) => line.msg.startsWith('Skyhook deleted')).map((line) => line.skyhook);
    expect(finalized).toEqual(expect.arrayContaining(['midway', 'compat', 'res']));
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  }, 120_000);
});
