/**
 * Package lifecycle through the real operator on 2 nodes: one edit that upgrades one package,
 * downgrades another and removes a third runs upgrade→config, uninstall→apply→config and uninstall
 * only; removing every package leaves `{}`; a dependsOn cycle is reported as a condition; each
 * targeted node gets its metadata ConfigMap (upstream's labels.json, annotations.json,
 * packages.json, the node's own state as of the stage included), written before each of its
 * stages and mounted by every stage Job, and deleted once the node is no longer targeted.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1ConfigMap, V1Job } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  CHILD_ANNOTATIONS,
  CHILD_LABELS,
  GROUP_VERSION,
  nodeAnnotations,
  nodeLabels,
  SKYHOOK_CONDITIONS,
} from '../../src/api/names.js';
import type { NodeOp } from '../../src/api/nodeop.js';
import type { Package, Skyhook } from '../../src/api/skyhook.js';
import { agentVersion, nodeMetadataConfigMapName } from '../../src/controllers/skyhook/build/node-metadata.js';
import { readSkyhookSettings } from '../../src/controllers/skyhook/skyhook-settings.js';
import { mergePatchNode } from '../../src/kube/client.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { waitForList } from '../../src/kube/wait.js';
import { NODE_METADATA_MOUNT } from '../../src/controllers/skyhook/build/stage-nodeop.js';
import {
  setSkyhookPackages,
  createSkyhook,
  DEMO_LABEL,
  demoNodes,
  listNodes,
  NAMESPACE,
  recordStageJobs,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';

let h: SkyhookHarness;
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
const pkg = (version: string, extra: Partial<Package> = {}): Package => ({ version, image: IMAGE, ...extra });

beforeAll(async () => {
  h = await startSkyhookHarness(demoNodes(2, 0));
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const completeAt =
  (generation: number) =>
  (scr: Skyhook): boolean =>
    scr.status?.status === 'complete' && scr.status.observedGeneration === generation;

describe('upgrade, downgrade and removal in one edit', () => {
  it('runs upgrade then config, uninstall then apply then config, uninstall only; then removing all packages leaves {}', async () => {
    await createSkyhook(h, {
      metadata: { name: 'life' },
      spec: {
        nodeSelectors: { matchLabels: DEMO_LABEL },
        packages: { up: pkg('1.0.0'), down: pkg('2.0.0'), gone: pkg('1.0.0') },
      },
    });
    const first = await waitForSkyhook(h, 'life', (scr) => scr.status?.status === 'complete');

    const jobs = await recordStageJobs(h);
    await setSkyhookPackages(h, 'life', { up: pkg('1.1.0'), down: pkg('1.0.0') });
    const edited = await waitForSkyhook(h, 'life', completeAt((first.metadata.generation ?? 0) + 1));
    await jobs.stop();

    expect(edited.status).toMatchObject({ completeNodes: '2/2', packageList: 'down:1.0.0,up:1.1.0' });
    for (const node of ['demo-0', 'demo-1']) {
      expect(jobs.stagesByNode('life', 'up-1.1.0')[node]).toEqual(['upgrade', 'config']);
      expect(jobs.stagesByNode('life', 'down-2.0.0')[node]).toEqual(['uninstall']);
      expect(jobs.stagesByNode('life', 'down-1.0.0')[node]).toEqual(['apply', 'config']);
      expect(jobs.stagesByNode('life', 'gone-1.0.0')[node]).toEqual(['uninstall']);
      expect(jobs.stagesByNode('life', 'up-1.0.0')[node]).toBeUndefined();
    }
    // uninstall of the old version before the apply of the new one
    const order = [...jobs.jobs.values()]
      .filter((j) => j.node === 'demo-0' && j.package.startsWith('down-'))
      .map((j) => `${j.package}/${j.stage}`);
    expect(order).toEqual(['down-2.0.0/uninstall', 'down-1.0.0/apply', 'down-1.0.0/config']);
    const node = (await listNodes(h)).find((n) => n.metadata?.name === 'demo-0')!;
    expect(node.metadata?.annotations?.[nodeAnnotations.nodeState('life')]).toBe(
      `{"down|1.0.0":{"name":"down","version":"1.0.0","image":"${IMAGE}","stage":"config","state":"complete"},"up|1.1.0":{"name":"up","version":"1.1.0","image":"${IMAGE}","stage":"config","state":"complete"}}`,
    );

    await setSkyhookPackages(h, 'life', {});
    await waitForSkyhook(h, 'life', completeAt((first.metadata.generation ?? 0) + 2));
    for (const n of await listNodes(h)) expect(n.metadata?.annotations?.[nodeAnnotations.nodeState('life')]).toBe('{}');
  }, 150_000);
});

describe('dependsOn', () => {
  it('reports a cycle as a condition instead of hanging', async () => {
    await createSkyhook(h, {
      metadata: { name: 'cycle' },
      spec: {
        nodeSelectors: { matchLabels: DEMO_LABEL },
        packages: {
          left: pkg('1.0.0', { dependsOn: { right: '1.0.0' } }),
          right: pkg('1.0.0', { dependsOn: { left: '1.0.0' } }),
        },
      },
    });
    const blocked = await waitForSkyhook(h, 'cycle', (scr) =>
      (scr.status?.conditions ?? []).some((c) => c.type === SKYHOOK_CONDITIONS.invalidSpec && c.status === 'True'),
    );
    const condition = blocked.status?.conditions?.find((c) => c.type === SKYHOOK_CONDITIONS.invalidSpec);
    expect(condition?.message).toMatch(/left/);
    expect(blocked.status?.status).toBe('blocked');
  }, 60_000);
});

describe('node metadata ConfigMaps', () => {
  const CONFIGMAPS_PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
  const META = 'meta-test';
  const cmName = (node: string): string => nodeMetadataConfigMapName('meta', node);
  const readCm = (node: string): Promise<V1ConfigMap> =>
    h.core.readNamespacedConfigMap({ name: cmName(node), namespace: NAMESPACE });
  const setLabels = (node: string, labels: Record<string, string | null>) =>
    mergePatchNode(h.core, node, { metadata: { labels } });
  const agent = agentVersion(readSkyhookSettings(process.env, NAMESPACE).agentImage);
  const packagesJson = (version: string): string =>
    `{"agentVersion":"${agent}","packages":{"tool":{"name":"tool","version":"${version}","image":"${IMAGE}","agentImageOverride":"ghcr.io/x/agent:9.9.9"}}}`;

  /** The resourceVersion each stage NodeOp of `meta` was created with, by `<node>/<stage>/<version>`. */
  async function recordOpCreations(): Promise<{ created: Map<string, bigint>; stop(): Promise<void> }> {
    const informer = new Informer<NodeOp>(
      apiListWatch(h.cp.kubeConfig, `/apis/${API_GROUP}/${API_VERSION}/namespaces/${NAMESPACE}/nodeops`),
      { resource: 'meta-ops', logger: silentLogger() },
    );
    const created = new Map<string, bigint>();
    await new Promise<void>((resolve, reject) => {
      informer.on({
        // Added after the sync: the watch's ADDED event, so the version the op was created with.
        add: (op) => {
          const stage = op.spec.skyhookStage;
          if (stage?.skyhook !== 'meta' || !informer.synced) return;
          const key = `${op.spec.targetNodes?.[0]}/${stage.stage}/${stage.package.version}`;
          if (!created.has(key)) created.set(key, BigInt(op.metadata.resourceVersion ?? '0'));
        },
      });
      informer.start();
      // A sync failure rejects with its cause, rather than leaving the test to its timeout.
      informer.waitForSync(30_000).then(resolve, reject);
    });
    return { created, stop: () => informer.stop() };
  }

  it('gives each targeted node its ConfigMap before each stage, mounted by every stage Job, and deletes it once the node is no longer targeted', async () => {
    await setLabels('demo-0', { [META]: 'yes' });
    const ops = await recordOpCreations();
    /** The creation versions of the node's stage ops for this package version, in order. */
    const opVersions = (node: string, version: string): bigint[] =>
      [...ops.created]
        .filter(([key]) => key.startsWith(`${node}/`) && key.endsWith(`/${version}`))
        .map(([, rv]) => rv)
        .sort((a, b) => (a < b ? -1 : 1));
    /** Written before each stage, the last time before the last one: after the first op, before the last. */
    const writtenBeforeLastStage = (cm: V1ConfigMap, node: string, version: string): void => {
      const created = opVersions(node, version);
      expect(created).toHaveLength(2);
      expect(BigInt(cm.metadata?.resourceVersion ?? '0')).toBeGreaterThan(created[0]!);
      expect(BigInt(cm.metadata?.resourceVersion ?? '0')).toBeLessThan(created[1]!);
    };
    const tool = (version: string): Package => pkg(version, { agentImageOverride: 'ghcr.io/x/agent:9.9.9' });
    // Priority 1: the invalid 'cycle' SCR above must not hold it back on the shared nodes.
    await createSkyhook(h, {
      metadata: { name: 'meta' },
      spec: { priority: 1, nodeSelectors: { matchLabels: { [META]: 'yes' } }, packages: { tool: tool('1.0.0') } },
    });
    const first = await waitForSkyhook(
      h,
      'meta',
      (scr) => scr.status?.status === 'complete' && scr.status.completeNodes === '1/1',
    );

    // Exactly upstream's shape: the three files, label, annotations and the SCR as controller owner.
    const cm0 = await readCm('demo-0');
    expect(Object.keys(cm0.data ?? {}).sort()).toEqual(['annotations.json', 'labels.json', 'packages.json']);
    expect(cm0.metadata?.labels).toEqual({ [CHILD_LABELS.nodeMeta]: 'meta' });
    expect(cm0.metadata?.annotations).toMatchObject({
      [CHILD_ANNOTATIONS.name]: 'meta',
      [CHILD_ANNOTATIONS.nodeName]: 'demo-0',
    });
    expect(cm0.metadata?.ownerReferences).toEqual([
      {
        apiVersion: GROUP_VERSION,
        kind: 'Skyhook',
        name: 'meta',
        uid: first.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(cm0.data?.['packages.json']).toBe(packagesJson('1.0.0'));
    // resourceVersions come from one etcd revision counter: written again before the node's second
    // stage op was created (its node state changed), and not after it.
    writtenBeforeLastStage(cm0, 'demo-0', '1.0.0');
    const node0 = (await listNodes(h)).find((n) => n.metadata?.name === 'demo-0')!;
    const labels0 = JSON.parse(cm0.data?.['labels.json'] ?? '') as Record<string, string>;
    expect(labels0).toMatchObject({ [META]: 'yes', 'kubernetes.io/hostname': 'demo-0' });
    // The node's labels and this SCR's keys as they were when the last stage began (complete by now).
    expect(node0.metadata?.labels?.[nodeLabels.status('meta')]).toBe('complete');
    expect(labels0).toEqual({ ...node0.metadata?.labels, [nodeLabels.status('meta')]: 'in_progress' });
    const annotations0 = JSON.parse(cm0.data?.['annotations.json'] ?? '') as Record<string, string>;
    expect(JSON.parse(annotations0[nodeAnnotations.nodeState('meta')] ?? '{}')).toEqual({
      'tool|1.0.0': { name: 'tool', version: '1.0.0', image: IMAGE, stage: 'config', state: 'in_progress' },
    });
    expect(annotations0[nodeAnnotations.status('meta')]).toBe('in_progress');

    // Every stage Job mounts it read-only at /skyhook-package/node-metadata, in every init container.
    const jobs = (
      await waitForList<V1Job>(
        h.cp.kubeConfig,
        `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
        (all) => all.filter((j) => j.metadata?.labels?.[CHILD_LABELS.name] === 'meta').length >= 2,
        30_000,
        'stage Jobs of meta',
      )
    ).filter((j) => j.metadata?.labels?.[CHILD_LABELS.name] === 'meta');
    expect(jobs.map((j) => j.metadata?.labels?.[CHILD_LABELS.stage]).sort()).toEqual(['apply', 'config']);
    for (const job of jobs) {
      const pod = job.spec?.template.spec;
      expect(pod?.volumes).toContainEqual({
        name: 'node-metadata',
        configMap: { name: cmName('demo-0'), defaultMode: 420 },
      });
      expect(pod?.initContainers?.length).toBeGreaterThan(0);
      for (const c of pod?.initContainers ?? [])
        expect(c.volumeMounts).toContainEqual({
          name: 'node-metadata',
          mountPath: NODE_METADATA_MOUNT,
          readOnly: true,
        });
    }

    // A node labelled after the fact: demo-1 becomes targeted, and its ConfigMap, with its labels,
    // is written before its first stage. demo-0 gets a label too (first, so the operator's node
    // watch shows it before demo-1's); demo-0 has nothing to do, so its ConfigMap takes the label
    // only with its next stage.
    await setLabels('demo-0', { 'example.com/extra': 'later' });
    await setLabels('demo-1', { [META]: 'yes' });
    await waitForSkyhook(h, 'meta', (scr) => scr.status?.status === 'complete' && scr.status.completeNodes === '2/2');
    const new1 = await readCm('demo-1');
    expect(JSON.parse(new1.data?.['labels.json'] ?? '')).toMatchObject({
      [META]: 'yes',
      'kubernetes.io/hostname': 'demo-1',
    });
    expect(new1.data?.['packages.json']).toBe(packagesJson('1.0.0'));
    writtenBeforeLastStage(new1, 'demo-1', '1.0.0');
    expect(JSON.parse((await readCm('demo-0')).data?.['labels.json'] ?? '')).not.toHaveProperty(['example.com/extra']);

    // The next stages (upgrade, config) on each node: written before them with the new label and
    // version, and not after the last one.
    await setSkyhookPackages(h, 'meta', { tool: tool('1.1.0') });
    await waitForSkyhook(
      h,
      'meta',
      (scr) =>
        scr.status?.status === 'complete' &&
        scr.status.observedGeneration === (first.metadata.generation ?? 0) + 1 &&
        scr.status.completeNodes === '2/2',
    );
    await ops.stop();
    for (const node of ['demo-0', 'demo-1']) {
      const cm = await readCm(node);
      expect(JSON.parse(cm.data?.['labels.json'] ?? '')).toMatchObject({
        [META]: 'yes',
        ...(node === 'demo-0' ? { 'example.com/extra': 'later' } : {}),
      });
      expect(cm.data?.['packages.json']).toBe(packagesJson('1.1.0'));
      expect(ops.created.has(`${node}/upgrade/1.1.0`)).toBe(true);
      writtenBeforeLastStage(cm, node, '1.1.0');
    }

    // Un-targeting demo-1 deletes its ConfigMap; demo-0 keeps its own.
    await setLabels('demo-1', { [META]: null });
    const left = await waitForList<V1ConfigMap>(
      h.cp.kubeConfig,
      CONFIGMAPS_PATH,
      (all) => !all.some((cm) => cm.metadata?.name === cmName('demo-1')),
      30_000,
      'metadata ConfigMap of demo-1 deleted',
    );
    expect(
      left.filter((cm) => cm.metadata?.labels?.[CHILD_LABELS.nodeMeta] === 'meta').map((cm) => cm.metadata?.name),
    ).toEqual([cmName('demo-0')]);
  }, 120_000);
});
