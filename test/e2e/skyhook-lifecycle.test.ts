/**
 * Package lifecycle through the real operator on 2 nodes: one edit that upgrades one package,
 * downgrades another and removes a third runs upgrade→config, uninstall→apply→config and uninstall
 * only; removing every package leaves `{}`; a dependsOn cycle is reported as a condition.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { nodeAnnotations, SKYHOOK_CONDITIONS } from '../../src/api/names.js';
import type { Package, Skyhook } from '../../src/api/skyhook.js';
import { setSkyhookPackages, createSkyhook, DEMO_LABEL, demoNodes, listNodes, recordStageJobs, startSkyhookHarness, waitForSkyhook, type SkyhookHarness } from './skyhook-harness.js';

let h: SkyhookHarness;
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
const pkg = (version: string, extra: Partial<Package> = {}): Package => ({ version, image: IMAGE, ...extra });

beforeAll(async () => {
  h = await startSkyhookHarness(demoNodes(2, 0));
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);


const completeAt = (generation: number) => (scr: Skyhook): boolean => scr.status?.status === 'complete' && scr.status.observedGeneration === generation;

describe('upgrade, downgrade and removal in one edit', () => {
  it('runs upgrade then config, uninstall then apply then config, uninstall only; then removing all packages leaves {}', async () => {
    await createSkyhook(h, { metadata: { name: 'life' }, spec: { nodeSelectors: { matchLabels: DEMO_LABEL }, packages: { up: pkg('1.0.0'), down: pkg('2.0.0'), gone: pkg('1.0.0') } } });
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
    const order = [...jobs.jobs.values()].filter((j) => j.node === 'demo-0' && j.package.startsWith('down-')).map((j) => `${j.package}/${j.stage}`);
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
      spec: { nodeSelectors: { matchLabels: DEMO_LABEL }, packages: { left: pkg('1.0.0', { dependsOn: { right: '1.0.0' } }), right: pkg('1.0.0', { dependsOn: { left: '1.0.0' } }) } },
    });
    const blocked = await waitForSkyhook(h, 'cycle', (scr) => (scr.status?.conditions ?? []).some((c) => c.type === SKYHOOK_CONDITIONS.invalidSpec && c.status === 'True'));
    const condition = blocked.status?.conditions?.find((c) => c.type === SKYHOOK_CONDITIONS.invalidSpec);
    expect(condition?.message).toMatch(/left/);
    expect(blocked.status?.status).toBe('blocked');
  }, 60_000);
});
