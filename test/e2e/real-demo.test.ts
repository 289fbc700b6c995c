/**
 * The upstream Skyhook README demo, unchanged, on 2 real nodes (kubelet + containerd, stage Jobs in
 * real containers of the images `npm run images` builds) beside a simulated node: apply then config
 * write /skyhook-hello-world into each node's own root, the agent's output is in `kubectl logs` of
 * each stage Job, the nodeState annotation is upstream's bytes, and a config change re-runs config
 * (one more line). The config stage copies the package over the apply stage's copy, with the
 * busybox-based shellscript package image (the symlink-overwrite case of real-node.md §5.2).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { nodeAnnotations, PREFIX, SANDBOX_NAMES } from '../../src/api/names.js';
import type { Skyhook } from '../../src/api/skyhook.js';
import { readVersions } from '../../src/sandbox/binaries.js';
import {
  DEMO_LABEL,
  kubectlOk,
  listNodes,
  recordStageJobs,
  REPO_ROOT,
  setSkyhookPackages,
  stageLogs,
  startRealHarness,
  waitForSkyhook,
  type RealHarness,
} from './real-harness.js';

const README_DEMO = resolve(REPO_ROOT, '../shared/examples/skyhook-readme-demo.yaml');
const REAL = ['real-0', 'real-1'];
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
let h: RealHarness;

beforeAll(async () => {
  h = await startRealHarness({ realNodes: 2, realNodeLabels: DEMO_LABEL, simulatedNodes: [{ name: 'sim-0' }] });
}, 300_000);

afterAll(async () => {
  await h?.stop();
}, 120_000);

const helloWorld = (node: string): string => readFileSync(join(h.node(node).rootDir, 'skyhook-hello-world'), 'utf8');

describe('the Skyhook README demo on real nodes', () => {
  it('labels the node kinds; KWOK leaves the real nodes alone', async () => {
    const nodes = await listNodes(h);
    const kinds = Object.fromEntries(
      nodes.map((n) => [n.metadata?.name, n.metadata?.labels?.[SANDBOX_NAMES.nodeKindLabel]]),
    );
    expect(kinds).toEqual({ 'real-0': 'real', 'real-1': 'real', 'sim-0': 'simulated' });
    for (const name of REAL) {
      const node = nodes.find((n) => n.metadata?.name === name);
      expect(node?.metadata?.annotations?.[SANDBOX_NAMES.simulatedNodeAnnotation]).toBeUndefined();
      // The kubelet of the release under test (SKYHOOK_K8S: the smoke subset runs on the oldest).
      expect(node?.status?.nodeInfo?.kubeletVersion).toBe(readVersions().k8s);
      expect(node?.status?.nodeInfo?.bootID).toBe(h.node(name).boots.at(-1)?.bootId);
    }
  });

  it("runs apply then config in real containers: each node root holds the file, logs hold the agent output, node state is upstream's", async () => {
    const jobs = await recordStageJobs(h);
    const started = Date.now();
    await kubectlOk(h, ['apply', '-f', README_DEMO]);
    const done = await waitForSkyhook(h, 'demo', (scr) => scr.status?.status === 'complete', 240_000);
    await jobs.stop();
    console.log(`README demo on ${REAL.length} real nodes: complete in ${Date.now() - started} ms`);

    expect(done.status).toMatchObject({ status: 'complete', completeNodes: '2/2', packageList: 'tuning:1.1.0' });
    expect(jobs.stagesByNode('demo')).toEqual({ 'real-0': ['apply', 'config'], 'real-1': ['apply', 'config'] });
    const expectedState = `{"tuning|1.1.0":{"name":"tuning","version":"1.1.0","image":"${IMAGE}","stage":"config","state":"complete"}}`;
    for (const name of REAL) {
      expect(helloWorld(name)).toBe('hello world\na config is run\n');
      const node = (await listNodes(h)).find((n) => n.metadata?.name === name);
      expect(node?.metadata?.annotations?.[nodeAnnotations.nodeState('demo')]).toBe(expectedState);
      const logs = await stageLogs(h, 'demo', name);
      const byContainer = (suffix: string): string =>
        Object.entries(logs)
          .filter(([key]) => key.endsWith(`/${suffix}`))
          .map(([, text]) => text)
          .join('\n');
      expect(byContainer('tuning-apply')).toMatch(/SUCEEDED: shellscript_run\.sh apply/);
      expect(byContainer('tuning-applycheck')).toMatch(/hello world/);
      expect(byContainer('tuning-config')).toMatch(/SUCEEDED: shellscript_run\.sh config/);
      expect(byContainer('tuning-configcheck')).toMatch(/a config is run/);
    }
    // The machine's own / is not the nodes' host.
    expect(() => readFileSync('/skyhook-hello-world')).toThrow();
    const simulated = (await listNodes(h)).find((n) => n.metadata?.name === 'sim-0');
    expect(Object.keys(simulated?.metadata?.annotations ?? {}).filter((k) => k.startsWith(`${PREFIX}/`))).toEqual([]);
  }, 300_000);

  it('a config change re-runs config on each node and the file gains one line', async () => {
    const jobs = await recordStageJobs(h);
    const current = (await h.custom.getClusterCustomObject({
      group: 'skyhook.nvidia.com',
      version: 'v1alpha1',
      plural: 'skyhooks',
      name: 'demo',
    })) as Skyhook;
    const tuning = current.spec.packages!['tuning']!;
    const configMap = { ...tuning.configMap, 'config.sh': `${tuning.configMap?.['config.sh'] ?? ''}\n# second config` };
    await setSkyhookPackages(h, 'demo', { tuning: { ...tuning, configMap } });
    await waitForSkyhook(
      h,
      'demo',
      (scr) =>
        scr.status?.status === 'complete' &&
        scr.status.observedGeneration === scr.metadata.generation &&
        [...jobs.jobs.values()].filter((j) => j.stage === 'config' && j.succeeded).length === REAL.length,
      240_000,
    );
    await jobs.stop();
    expect(jobs.stagesByNode('demo')).toEqual({ 'real-0': ['config'], 'real-1': ['config'] });
    for (const name of REAL) expect(helloWorld(name)).toBe('hello world\na config is run\na config is run\n');
    expect([...jobs.jobs.values()].map((j) => j.node).every((n) => REAL.includes(n))).toBe(true);
    expect([...jobs.jobs.values()].every((j) => j.skyhook === 'demo' && !j.failed)).toBe(true);
  }, 300_000);
});
