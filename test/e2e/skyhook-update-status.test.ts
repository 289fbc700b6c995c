/**
 * Status after an update, through the real operator (issue 19, item 3): create, complete, update
 * (one package's env, another's configMap value and gracefulShutdown), complete again. Each time
 * `observedGeneration` reaches the new generation and `nodeState`/`nodeStatus` name every node
 * once the re-run Jobs are done, and only the package whose configMap changed re-runs, and only its config stage.
 * The same after `kubectl skyhook reset`, after an earlier Skyhook tainted the nodes, and with the
 * update made by a replace of the whole object (which drops the finalizer and annotations).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { DEFAULT_RUNTIME_REQUIRED_TAINT, nodeAnnotations } from '../../src/api/names.js';
import type { Package, Skyhook } from '../../src/api/skyhook.js';
import {
  createGroupSkyhook,
  GROUP_LABEL,
  groupNodes,
  kubectlOk,
  listNodes,
  recordStageJobs,
  REPO_ROOT,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';
import { eventually, waitForValue } from './eventually.js';

const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
let h: SkyhookHarness;

beforeAll(async () => {
  h = await startSkyhookHarness([...groupNodes('plain', 2), ...groupNodes('reset', 2), ...groupNodes('taint', 2)]);
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const packages = (updated: boolean): Record<string, Package> => ({
  conf: {
    version: '1.0.0',
    image: IMAGE,
    configMap: { 'a.conf': updated ? 'two' : 'one', 'b.conf': 'same' },
    ...(updated ? { gracefulShutdown: '10s' } : {}),
  },
  envy: {
    version: '1.0.0',
    image: IMAGE,
    configMap: { 'c.conf': 'same' },
    env: [{ name: 'MODE', value: updated ? 'new' : 'old' }],
  },
});

/** Complete at `generation` with every node of `group` in nodeState and nodeStatus. */
function converged(group: string, generation: number) {
  const nodes = [0, 1].map((i) => `${group}-${i}`);
  return (scr: Skyhook): boolean =>
    scr.status?.status === 'complete' &&
    scr.status.observedGeneration === generation &&
    nodes.every(
      (node) =>
        scr.status?.nodeStatus?.[node] === 'complete' && Object.keys(scr.status?.nodeState?.[node] ?? {}).length === 2,
    );
}

function skyhookCli(...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [join(REPO_ROOT, 'bin/skyhook.js'), ...args, '--kubeconfig', h.cp.kubeconfigPath],
      { cwd: REPO_ROOT },
      (error, _stdout, stderr) => {
        if (error) reject(new Error(`skyhook ${args.join(' ')}: ${stderr}`));
        else resolve();
      },
    );
    child.stdin?.end();
  });
}

/** The update as a user makes it: a merge patch of the spec, or a replace of the whole object from a manifest. */
async function update(
  name: string,
  group: string,
  how: 'patch' | 'replace',
  extra: Partial<Skyhook['spec']> = {},
): Promise<void> {
  if (how === 'patch') {
    await kubectlOk(h, [
      'patch',
      'skyhook',
      name,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { packages: packages(true) } }),
    ]);
    return;
  }
  // As a test tool replaces from a file: the live resourceVersion, everything else from the file
  // (no finalizer, no annotations: the operator puts both back). A status write of the operator
  // between the read and the replace makes it a Conflict; the tool reads and replaces again.
  for (let attempt = 1; ; attempt++) {
    const live = JSON.parse(await kubectlOk(h, ['get', 'skyhook', name, '-o', 'json'])) as Skyhook;
    const manifest = {
      apiVersion: 'skyhook.nvidia.com/v1alpha1',
      kind: 'Skyhook',
      metadata: { name, resourceVersion: live.metadata.resourceVersion },
      spec: { nodeSelectors: { matchLabels: { [GROUP_LABEL]: group } }, ...extra, packages: packages(true) },
    };
    const replaced = await h.cp.kubectl(['replace', '-f', '-'], { input: JSON.stringify(manifest) });
    if (replaced.code === 0) return;
    if (attempt >= 10 || !/Conflict|the object has been modified/.test(replaced.stderr))
      throw new Error(`kubectl replace: ${replaced.stderr}`);
  }
}

/** Update a complete SCR at generation 1 and check what re-ran and that the status converged. */
async function updateAndConverge(
  name: string,
  group: string,
  how: 'patch' | 'replace',
  extra: Partial<Skyhook['spec']> = {},
): Promise<void> {
  const jobs = await recordStageJobs(h);
  await update(name, group, how, extra);
  const done = await waitForSkyhook(h, name, converged(group, 2), 60_000);
  // The status says converged only once the Jobs it re-ran are done (their watch may deliver a moment later).
  await eventually(
    async () => [...jobs.jobs.values()].filter((job) => job.doneAt === undefined).length,
    (running) => running === 0,
  );
  await jobs.stop();
  // Only the package whose configMap changed re-runs, and only its config stage.
  expect(jobs.stagesByNode(name)).toEqual({ [`${group}-0`]: ['config'], [`${group}-1`]: ['config'] });
  expect(jobs.stagesByNode(name, 'conf-1.0.0')).toEqual({ [`${group}-0`]: ['config'], [`${group}-1`]: ['config'] });
  expect(done.status).toMatchObject({ completeNodes: '2/2', nodesInProgress: 0, configUpdates: {} });
  expect(done.metadata.generation).toBe(2);
}

/** One package's entry in a node's `nodeState_<scr>` annotation, as far as these tests read it. */
interface PackageEntry {
  stage: string;
  state: string;
}

describe('status after an update', () => {
  it('converges to generation 2 with every node in nodeState and nodeStatus; the update a replace of the whole object', async () => {
    await createGroupSkyhook(h, 'plain', 'plain', { packages: packages(false) });
    await waitForSkyhook(h, 'plain', converged('plain', 1));
    await updateAndConverge('plain', 'plain', 'replace');
  }, 150_000);

  it('converges the same after `kubectl skyhook reset`', async () => {
    await createGroupSkyhook(h, 'again', 'reset', { packages: packages(false) });
    await waitForSkyhook(h, 'again', converged('reset', 1));
    const rerun = await recordStageJobs(h);
    const showsRerun = waitForSkyhook(h, 'again', (scr) => scr.status?.status === 'in_progress', 15_000);
    await skyhookCli('reset', 'again', '--yes');
    const reset = await listNodes(h);
    // The operator starts over at once, so a node may already show its first stage again by the time
    // it is listed; what reset must have removed is every entry of the finished rollout.
    for (const node of reset.filter((n) => n.metadata?.name?.startsWith('reset-'))) {
      const state = node.metadata?.annotations?.[nodeAnnotations.nodeState('again')];
      const entries = state === undefined ? [] : Object.values(JSON.parse(state) as Record<string, PackageEntry>);
      expect(entries.filter((entry) => entry.stage !== 'apply' || entry.state === 'complete')).toEqual([]);
    }
    // Every node starts over, the status shows it within seconds, and converges again at the same generation.
    await showsRerun;
    await waitForValue(
      "the rerun's 8 stage Jobs (2 nodes, apply and config twice each) to succeed",
      async () => [...rerun.jobs.values()].filter((job) => job.succeeded).length === 8 || undefined,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    await rerun.stop();
    expect(rerun.stagesByNode('again')).toEqual({
      'reset-0': ['apply', 'apply', 'config', 'config'],
      'reset-1': ['apply', 'apply', 'config', 'config'],
    });
    await waitForSkyhook(h, 'again', converged('reset', 1), 60_000);
    await updateAndConverge('again', 'reset', 'patch');
  }, 150_000);

  it('converges the same after an earlier Skyhook tainted the nodes', async () => {
    const slow: Package = { version: '1.0.0', image: IMAGE };
    await createGroupSkyhook(h, 'earlier', 'taint', {
      priority: 1,
      runtimeRequired: true,
      autoTaintNewNodes: true,
      packages: { slow },
    });
    // The runtime-required taint is on the nodes (an earlier Skyhook's auto-taint) when this one is created.
    const isTainted = (name: string) => async (): Promise<boolean> =>
      (await h.core.readNode({ name })).spec?.taints?.some((t) => t.key === DEFAULT_RUNTIME_REQUIRED_TAINT.key) ??
      false;
    for (const node of ['taint-0', 'taint-1'])
      await waitForValue(`the runtime-required taint on ${node}`, async () => (await isTainted(node)()) || undefined, {
        timeoutMs: 30_000,
        intervalMs: 100,
      });
    await createGroupSkyhook(h, 'later', 'taint', { priority: 2, runtimeRequired: true, packages: packages(false) });
    await waitForSkyhook(h, 'later', converged('taint', 1));
    await updateAndConverge('later', 'taint', 'replace', { priority: 2, runtimeRequired: true });
    for (const node of ['taint-0', 'taint-1']) expect(await isTainted(node)()).toBe(false);
  }, 150_000);
});
