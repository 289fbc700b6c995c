/**
 * Operator memory at scale: 1000 simulated nodes and 5 Skyhooks, each selecting every node (so
 * every node carries 5 nodeStates), rolling out at once. The peak RSS is the kernel's high-water
 * mark of the operator process (VmHWM) over a bounded window: a full rollout here is 10000 stage
 * Jobs, more than a small machine's control plane runs in minutes, so the output says how far the
 * rollout got and how many objects the operator had cached by then (they grow with it: finished
 * stage Jobs are kept an hour).
 */
import { API_GROUP, API_VERSION, KINDS } from '../src/api/names.js';
import type { Skyhook } from '../src/api/skyhook.js';
import { getJson } from '../src/kube/wait.js';
import { createSkyhooks, operatorNodeFlags, say, simulatedPackage, withBenchCluster } from './bench-cluster.js';
import { SKYHOOKS_PATH } from '../test/e2e/skyhook-cluster.js';

const NODES = 1000;
const SKYHOOKS = 5;
const BUDGET = 20;
const PHASE = '500ms';
const TARGET_MB = 250;
/** Bounds the whole benchmark to about ten minutes with the control plane's start. */
const WINDOW_MS = 6 * 60_000;
const SAMPLE_MS = 15_000;

interface Counted {
  items: unknown[];
}

export async function memory(): Promise<Record<string, unknown>> {
  return withBenchCluster({ nodes: NODES, podDurationMs: 500 }, async ({ cp, operator }) => {
    const idleRssMb = operator.peakRssMb();
    const names = Array.from({ length: SKYHOOKS }, (_, i) => `bench-memory-${i}`);
    const started = Date.now();
    await createSkyhooks(cp, names.map((name) => ({
      metadata: { name },
      spec: { nodeSelectors: { matchLabels: { type: 'kwok' } }, interruptionBudget: { count: BUDGET }, packages: { pkg: simulatedPackage(PHASE) } },
    })));
    const samples: [number, number][] = [];
    let completeNodes = 0;
    for (;;) {
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
      const scrs = (await getJson<{ items: Skyhook[] }>(cp.kubeConfig, SKYHOOKS_PATH)).items;
      completeNodes = scrs.reduce((sum, scr) => sum + Number((scr.status?.completeNodes ?? '0/0').split('/')[0]), 0);
      const elapsed = Date.now() - started;
      samples.push([Math.round(elapsed / 1000), operator.peakRssMb()]);
      say(`${Math.round(elapsed / 1000)} s: ${completeNodes}/${NODES * SKYHOOKS} node-SCRs complete, operator peak RSS ${operator.peakRssMb()} MB`);
      if (completeNodes === NODES * SKYHOOKS || elapsed >= WINDOW_MS) break;
    }
    const peakRssMb = operator.peakRssMb();
    const nodeOps = (await getJson<Counted>(cp.kubeConfig, `/apis/${API_GROUP}/${API_VERSION}/${KINDS.nodeOp.plural}`)).items.length;
    const jobs = (await getJson<Counted>(cp.kubeConfig, '/apis/batch/v1/jobs')).items.length;
    return {
      nodes: NODES, skyhooks: SKYHOOKS, budgetPerSkyhook: BUDGET, windowS: Math.round((Date.now() - started) / 1000),
      completeNodeSkyhooks: `${completeNodes}/${NODES * SKYHOOKS}`, rolloutFinished: completeNodes === NODES * SKYHOOKS,
      cachedAtEnd: { nodeOps, jobs },
      operatorNodeFlags: operatorNodeFlags(), idleRssMb, peakRssMb, rssSamples: samples, operatorCpuSeconds: operator.cpuSeconds(),
      target: `peak RSS <= ${TARGET_MB} MB`, met: peakRssMb <= TARGET_MB,
    };
  });
}
