/**
 * Updating a complete SCR through the real operator (upstream's simple-update scenario) on 2 nodes:
 * one edit changes a key of one package's configMap and adds two packages with prerelease
 * versions. Everything completes; the changed package re-runs only `config` (one Job per node) and
 * its ConfigMap carries the new data; the untouched package runs nothing; the new ones run apply
 * then config.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { nodeAnnotations } from '../../src/api/names.js';
import type { Package } from '../../src/api/skyhook.js';
import { parseNodeState } from '../../src/api/node-state.js';
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
const NODES = ['demo-0', 'demo-1'];
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
const pkg = (version: string, extra: Partial<Package> = {}): Package => ({ version, image: IMAGE, ...extra });

beforeAll(async () => {
  h = await startSkyhookHarness(demoNodes(NODES.length, 0));
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

describe('updating a complete Skyhook', () => {
  it('re-runs config only where the configMap changed, installs the new prerelease packages, and completes', async () => {
    const before = {
      dexter: pkg('1.2.3', { configMap: { 'game.properties': 'lives=3', 'ui.properties': 'color=blue' } }),
      spencer: pkg('3.2.3', { configMap: { motd: 'hello' } }),
    };
    await createSkyhook(h, {
      metadata: { name: 'update' },
      spec: { nodeSelectors: { matchLabels: DEMO_LABEL }, packages: before },
    });
    const first = await waitForSkyhook(h, 'update', (scr) => scr.status?.status === 'complete');

    const jobs = await recordStageJobs(h);
    // One key changed, one added; spencer's configMap is the same.
    const dexter = pkg('1.2.3', {
      configMap: { 'game.properties': 'lives=5', 'ui.properties': 'color=blue', 'extra.properties': 'on=true' },
    });
    await setSkyhookPackages(h, 'update', {
      ...before,
      dexter,
      baxter: pkg('2.3.1-test'),
      'jackie-chan': pkg('2024.7.7-test'),
    });
    const generation = (first.metadata.generation ?? 0) + 1;
    const done = await waitForSkyhook(
      h,
      'update',
      (scr) => scr.status?.status === 'complete' && scr.status.observedGeneration === generation,
    );
    await jobs.stop();

    expect(done.status).toMatchObject({
      completeNodes: '2/2',
      nodesInProgress: 0,
      packageList: 'baxter:2.3.1-test,dexter:1.2.3,jackie-chan:2024.7.7-test,spencer:3.2.3',
    });
    expect([...(done.status?.configUpdates?.['dexter'] ?? [])].sort()).toEqual(['extra.properties', 'game.properties']);
    expect(done.status?.configUpdates?.['spencer']).toBeUndefined();
    for (const node of NODES) {
      expect(jobs.stagesByNode('update', 'dexter-1.2.3')[node]).toEqual(['config']);
      expect(jobs.stagesByNode('update', 'spencer-3.2.3')[node]).toBeUndefined();
      expect(jobs.stagesByNode('update', 'baxter-2.3.1-test')[node]).toEqual(['apply', 'config']);
      expect(jobs.stagesByNode('update', 'jackie-chan-2024.7.7-test')[node]).toEqual(['apply', 'config']);
    }
    expect([...jobs.jobs.values()].every((job) => job.succeeded && !job.failed)).toBe(true);

    for (const node of (await listNodes(h)).filter((n) => NODES.includes(n.metadata?.name ?? ''))) {
      const state = parseNodeState(node.metadata?.annotations?.[nodeAnnotations.nodeState('update')] ?? '{}');
      expect(Object.keys(state).sort()).toEqual([
        'baxter|2.3.1-test',
        'dexter|1.2.3',
        'jackie-chan|2024.7.7-test',
        'spencer|3.2.3',
      ]);
      for (const entry of Object.values(state)) expect(entry).toMatchObject({ stage: 'config', state: 'complete' });
    }
    const configMap = await h.core.readNamespacedConfigMap({ name: 'update-dexter-1.2.3', namespace: NAMESPACE });
    expect(configMap.data).toEqual(dexter.configMap);
  }, 150_000);
});
