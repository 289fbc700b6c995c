/**
 * The demo SCRs on 3 labelled and 2 unlabelled nodes, through the real operator (NodeOp and Skyhook
 * controllers): our config/samples/demo.yaml and, unchanged, the Skyhook README's demo. Each node
 * runs apply then config, once each; the nodeState annotation is upstream's bytes; the SCR reaches
 * complete 3/3; the unlabelled nodes are never touched. Deleting the SCR clears what it left on the
 * nodes and its children, which also lets the README demo (same name) start from scratch.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { resolve } from 'node:path';
import {
  API_GROUP,
  API_VERSION,
  nodeAnnotations,
  nodeConditionTypes,
  nodeLabels,
  PREFIX,
  SKYHOOK_FINALIZER,
} from '../../src/api/names.js';
import type { NodeOp } from '../../src/api/nodeop.js';
import { waitForList } from '../../src/kube/wait.js';
import {
  demoNodes,
  kubectlOk,
  listNodes,
  NAMESPACE,
  recordStageJobs,
  REPO_ROOT,
  startSkyhookHarness,
  waitForSkyhook,
  waitForSkyhookGone,
  type SkyhookHarness,
} from './skyhook-harness.js';

let h: SkyhookHarness;

beforeAll(async () => {
  h = await startSkyhookHarness(demoNodes(3, 2));
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const LABELLED = ['demo-0', 'demo-1', 'demo-2'];
const UNLABELLED = ['other-0', 'other-1'];
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';

describe.each([
  { sample: 'config/samples/demo.yaml', file: resolve(REPO_ROOT, 'config/samples/demo.yaml'), pkg: 'motd' },
  {
    sample: 'the Skyhook README demo',
    file: resolve(REPO_ROOT, '../shared/examples/skyhook-readme-demo.yaml'),
    pkg: 'tuning',
  },
])('$sample', ({ file, pkg }) => {
  it("runs apply then config once per labelled node, writes upstream's node state and completes 3/3; unlabelled nodes untouched", async () => {
    const jobs = await recordStageJobs(h);
    const startedAt = Date.now();
    await kubectlOk(h, ['apply', '-f', file]);
    const appliedAt = Date.now() - startedAt;
    const done = await waitForSkyhook(h, 'demo', (scr) => scr.status?.status === 'complete');
    const elapsedMs = Date.now() - startedAt;
    await jobs.stop();

    expect(done.status).toMatchObject({
      status: 'complete',
      completeNodes: '3/3',
      nodesInProgress: 0,
      packageList: `${pkg}:1.1.0`,
    });
    expect(done.status?.observedGeneration).toBe(done.metadata.generation);
    expect(done.metadata.finalizers).toContain(SKYHOOK_FINALIZER);
    expect(jobs.stagesByNode('demo')).toEqual(Object.fromEntries(LABELLED.map((node) => [node, ['apply', 'config']])));
    expect([...jobs.jobs.values()].every((job) => job.succeeded && !job.failed)).toBe(true);

    const expectedState = `{"${pkg}|1.1.0":{"name":"${pkg}","version":"1.1.0","image":"${IMAGE}","stage":"config","state":"complete"}}`;
    const nodes = await listNodes(h);
    for (const node of nodes.filter((n) => LABELLED.includes(n.metadata?.name ?? ''))) {
      expect(node.metadata?.annotations?.[nodeAnnotations.nodeState('demo')]).toBe(expectedState);
      expect(node.metadata?.annotations?.[nodeAnnotations.status('demo')]).toBe('complete');
      expect(node.metadata?.labels?.[nodeLabels.status('demo')]).toBe('complete');
      expect(node.metadata?.annotations?.[nodeAnnotations.version('demo')]).toBeDefined();
      const conditions = Object.fromEntries((node.status?.conditions ?? []).map((c) => [c.type, c]));
      expect(conditions[nodeConditionTypes.notReady('demo')]).toMatchObject({ status: 'False', reason: 'Complete' });
      expect(conditions[nodeConditionTypes.erroring('demo')]).toMatchObject({
        status: 'False',
        reason: 'Not Erroring',
      });
    }
    for (const node of nodes.filter((n) => UNLABELLED.includes(n.metadata?.name ?? ''))) {
      const touched = [
        ...Object.keys(node.metadata?.annotations ?? {}),
        ...Object.keys(node.metadata?.labels ?? {}),
      ].filter((key) => key.startsWith(`${PREFIX}/`));
      expect(touched).toEqual([]);
      expect((node.status?.conditions ?? []).filter((c) => c.type.startsWith(PREFIX))).toEqual([]);
    }
    const configMap = await h.core.readNamespacedConfigMap({ name: `demo-${pkg}-1.1.0`, namespace: NAMESPACE });
    expect(Object.keys(configMap.data ?? {}).sort()).toEqual([
      'apply.sh',
      'apply_check.sh',
      'config.sh',
      'config_check.sh',
    ]);
    // 3 nodes × 2 stages of ~2 × 250 ms each: event-driven, the rollout takes seconds, not the 2 s polls per step upstream needs.
    console.log(
      `demo ${pkg}: complete after ${elapsedMs} ms (kubectl apply took ${appliedAt} ms)`,
      [...jobs.jobs.values()]
        .map((j) => `${j.node}/${j.stage} ${j.seenAt - startedAt}-${(j.doneAt ?? 0) - startedAt}`)
        .join(', '),
    );

    await kubectlOk(h, ['delete', '-f', file, '--wait=false']);
    await waitForSkyhookGone(h, 'demo');
    await waitForList<NodeOp>(
      h.cp.kubeConfig,
      `/apis/${API_GROUP}/${API_VERSION}/namespaces/${NAMESPACE}/nodeops`,
      (ops) => ops.length === 0,
      30_000,
      'NodeOps deleted',
    );
    await waitForList<V1ConfigMap>(
      h.cp.kubeConfig,
      `/api/v1/namespaces/${NAMESPACE}/configmaps?labelSelector=${encodeURIComponent(`${PREFIX}/name`)}`,
      (cms) => cms.length === 0,
      30_000,
      'ConfigMaps deleted',
    );
    for (const node of await listNodes(h)) {
      const left = [
        ...Object.keys(node.metadata?.annotations ?? {}),
        ...Object.keys(node.metadata?.labels ?? {}),
      ].filter((key) => key.endsWith('_demo'));
      expect(left).toEqual([]);
      expect((node.status?.conditions ?? []).filter((c) => c.type.includes('/demo/'))).toEqual([]);
    }
  }, 150_000);
});
