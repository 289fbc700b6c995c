/**
 * `batchState` follows every batch as upstream's does, batch by batch, for each strategy (fixed,
 * linear, exponential) and for overlapping compartments, in the SCR status (every version a watch
 * on the SCR sees) and in the rollout gauges. Each SCR keeps its batch state at completion
 * (`resetBatchStateOnCompletion: false`), so the last batch stays visible.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CompartmentStatus, Package, Skyhook } from '../../src/api/skyhook.js';
import { API_GROUP, API_VERSION, KINDS } from '../../src/api/names.js';
import type { DeploymentPolicySpec } from '../../src/api/deployment-policy.js';
import { OVERLAPPING_COMPARTMENTS } from '../fixtures/overlapping-compartments.js';
import { Informer } from '../../src/kube/informer.js';
import { customResourcePath } from '../../src/kube/list-watch.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { eventually } from './eventually.js';
import {
  createDeploymentPolicy,
  createGroupSkyhook,
  groupNodes,
  setSkyhookPackages,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';

const PACKAGE: Package = { version: '1.0.0', image: 'ghcr.io/nvidia/skyhook-packages/shellscript' };
const NODES = [
  ...groupNodes('fixed', 6),
  ...groupNodes('linear', 6),
  ...groupNodes('expo', 7),
  ...groupNodes('upgrade', 6),
  // Overlapping: 2 nodes only us-west, 2 only production, 2 both (they go to the fixed prod-us-west).
  ...groupNodes('ovw', 2, () => ({ 'skyhook.nvidia.com/test-group': 'overlap', region: 'us-west' })),
  ...groupNodes('ovp', 2, () => ({ 'skyhook.nvidia.com/test-group': 'overlap', env: 'production' })),
  ...groupNodes('ovb', 2, () => ({ 'skyhook.nvidia.com/test-group': 'overlap', region: 'us-west', env: 'production' })),
];

let h: SkyhookHarness;

beforeAll(async () => {
  h = await startSkyhookHarness(NODES);
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

type Step = { currentBatch: number; lastBatchSize: number; completedNodes: number };

/** Every distinct batch state (with a batch picked) of each compartment of `name`, in the order the watch saw them. */
async function recordBatches(name: string) {
  const informer = new Informer<Skyhook>(
    apiListWatch(h.cp.kubeConfig, customResourcePath(API_GROUP, API_VERSION, KINDS.skyhook.plural)),
    { resource: `batches-${name}`, logger: silentLogger() },
  );
  const steps = new Map<string, Step[]>();
  const seen = (scr: Skyhook): void => {
    if (scr.metadata.name !== name) return;
    for (const [compartment, status] of Object.entries(scr.status?.compartmentStatuses ?? {})) {
      const state = (status as CompartmentStatus).batchState;
      if (!state?.lastBatchSize) continue;
      const step = {
        currentBatch: state.currentBatch ?? 1,
        lastBatchSize: state.lastBatchSize,
        completedNodes: state.completedNodes ?? 0,
      };
      const list = steps.get(compartment) ?? [];
      if (JSON.stringify(list.at(-1)) !== JSON.stringify(step)) list.push(step);
      steps.set(compartment, list);
    }
  };
  informer.on({ add: seen, update: seen });
  informer.start();
  await informer.waitForSync(30_000);
  return { steps, stop: () => informer.stop() };
}

async function gauge(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = h.manager()?.runtime.metrics.registry.getSingleMetric(name);
  const values = (await metric?.get())?.values ?? [];
  return values.find((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))?.value;
}

async function rollOut(name: string, group: string, policy: DeploymentPolicySpec): Promise<Map<string, Step[]>> {
  const recorder = await recordBatches(name);
  await createDeploymentPolicy(h, name, policy);
  await createGroupSkyhook(h, name, group, {
    deploymentPolicy: name,
    deploymentPolicyOptions: { resetBatchStateOnCompletion: false },
    packages: { pkg: PACKAGE },
  });
  const done = await waitForSkyhook(h, name, (s) => s.status?.status === 'complete', 180_000);
  await recorder.stop();
  // The gauges say what the final status says.
  for (const [compartment, status] of Object.entries(done.status?.compartmentStatuses ?? {})) {
    if (!status.batchState) continue;
    const labels = { skyhook_name: name, compartment_name: compartment };
    const batch = await eventually(
      () => gauge('skyhook_rollout_current_batch', labels),
      (v) => v === status.batchState?.currentBatch,
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    expect([compartment, batch]).toEqual([compartment, status.batchState.currentBatch]);
    expect(await gauge('skyhook_rollout_consecutive_failures', labels)).toBe(0);
  }
  return recorder.steps;
}

const step = (currentBatch: number, lastBatchSize: number, completedNodes: number): Step => ({
  currentBatch,
  lastBatchSize,
  completedNodes,
});

describe('batchState batch by batch', () => {
  it('fixed: batch after batch of initialBatch nodes', async () => {
    const steps = await rollOut('fixed', 'fixed', {
      default: { budget: { count: 2 }, strategy: { fixed: { initialBatch: 2 } } },
    });
    expect(steps.get('__default__')).toEqual([step(1, 2, 0), step(2, 2, 2), step(3, 2, 4)]);
  }, 240_000);

  it('linear: each batch delta larger', async () => {
    const steps = await rollOut('linear', 'linear', {
      default: { budget: { count: 3 }, strategy: { linear: { initialBatch: 1, delta: 1 } } },
    });
    expect(steps.get('__default__')).toEqual([step(1, 1, 0), step(2, 2, 1), step(3, 3, 3)]);
  }, 240_000);

  it('exponential: each batch growthFactor times larger', async () => {
    const steps = await rollOut('expo', 'expo', {
      default: { budget: { count: 4 }, strategy: { exponential: { initialBatch: 1, growthFactor: 2 } } },
    });
    expect(steps.get('__default__')).toEqual([step(1, 1, 0), step(2, 2, 1), step(3, 4, 3)]);
  }, 240_000);

  it('overlapping compartments: each compartment advances to its second batch', async () => {
    const steps = await rollOut('overlap', 'overlap', OVERLAPPING_COMPARTMENTS);
    // A compartment done before the whole Skyhook has its last batch judged too (upstream judges a
    // compartment with nothing in progress while the Skyhook is not complete); the last one to
    // finish completes the Skyhook, whose batches are not judged.
    for (const compartment of ['us-west', 'production', 'prod-us-west']) {
      const seen = steps.get(compartment) ?? [];
      expect([compartment, seen.slice(0, 2)]).toEqual([compartment, [step(1, 1, 0), step(2, 1, 1)]]);
      expect([compartment, seen.slice(2)]).toEqual([compartment, seen.length > 2 ? [step(3, 1, 2)] : []]);
    }
  }, 240_000);

  it('an upgrade: the version change resets the batch state once, then its batches advance (linear)', async () => {
    await createDeploymentPolicy(h, 'upgrade', {
      default: { budget: { count: 3 }, strategy: { linear: { initialBatch: 1, delta: 1 } } },
    });
    await createGroupSkyhook(h, 'upgrade', 'upgrade', { deploymentPolicy: 'upgrade', packages: { pkg: PACKAGE } });
    await waitForSkyhook(h, 'upgrade', (s) => s.status?.status === 'complete', 180_000);
    const recorder = await recordBatches('upgrade');
    await setSkyhookPackages(h, 'upgrade', { pkg: { ...PACKAGE, version: '1.1.0' } });
    await waitForSkyhook(
      h,
      'upgrade',
      (s) => s.status?.status === 'complete' && s.status.nodeState?.['upgrade-0']?.['pkg|1.1.0']?.state === 'complete',
      180_000,
    );
    await recorder.stop();
    // The state left by the install (with reset at completion, batch 1) is not a batch of the upgrade.
    expect(recorder.steps.get('__default__')).toEqual([step(1, 1, 0), step(2, 2, 1), step(3, 3, 3)]);
  }, 240_000);
});
