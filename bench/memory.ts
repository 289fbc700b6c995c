/**
 * Operator memory at scale: 1000 simulated nodes and 5 Skyhooks, each selecting every node (so
 * every node carries 5 nodeStates), rolling out at once. The peak RSS is the kernel's high-water
 * mark of the operator process (VmHWM) over a bounded window: a full rollout here is 10000 stage
 * Jobs, more than a small machine's control plane runs in minutes, so the output says how far the
 * rollout got and how many objects the operator had cached by then (they grow with it: finished
 * stage Jobs are kept an hour). The operator runs with its Deployment's runtime settings
 * (operator-runtime.ts). BENCH_NODES and BENCH_WINDOW_S shrink the run to look into a cause; the
 * target is only judged at the full size.
 */
import { API_GROUP, API_VERSION, KINDS } from '../src/api/names.js';
import type { Skyhook } from '../src/api/skyhook.js';
import { getJson } from '../src/kube/wait.js';
import { createSkyhooks, say, simulatedPackage, withBenchCluster } from './bench-cluster.js';
import type { MemoryStats } from './operator-process.js';
import { SKYHOOKS_PATH } from '../test/e2e/skyhook-cluster.js';

const FULL_NODES = 1000;
const SKYHOOKS = 5;
const BUDGET = 20;
const PHASE = '500ms';
const TARGET_MB = 250;
/** Bounds the whole benchmark to about ten minutes with the control plane's start. */
const FULL_WINDOW_MS = 6 * 60_000;
const SAMPLE_MS = 15_000;
/** The heap gauges move faster than the progress lines; their peaks are taken from this finer sampling. */
const HEAP_SAMPLE_MS = 2_000;

function positiveEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

/** The largest value of each gauge over the samples. */
function peaks(samples: MemoryStats[]): Partial<MemoryStats> {
  const max = (key: keyof MemoryStats): number => Math.max(...samples.map((s) => s[key]).filter(Number.isFinite));
  return samples.length === 0
    ? {}
    : { heapUsedMb: max('heapUsedMb'), heapTotalMb: max('heapTotalMb'), externalMb: max('externalMb') };
}

interface Counted {
  items: unknown[];
}

export async function memory(): Promise<Record<string, unknown>> {
  const NODES = positiveEnv('BENCH_NODES', FULL_NODES);
  const WINDOW_MS = positiveEnv('BENCH_WINDOW_S', FULL_WINDOW_MS / 1000) * 1000;
  return withBenchCluster({ nodes: NODES, podDurationMs: 500 }, async ({ cp, operator, runtime }) => {
    const idleRssMb = operator.peakRssMb();
    const idle = await operator.memoryStats();
    const heapSamples: MemoryStats[] = [];
    const heapSampler = setInterval(
      () =>
        void operator.memoryStats().then(
          (m) => heapSamples.push(m),
          () => undefined,
        ),
      HEAP_SAMPLE_MS,
    );
    const samples: [number, number][] = [];
    let completeNodes = 0;
    const started = Date.now();
    try {
      const names = Array.from({ length: SKYHOOKS }, (_, i) => `bench-memory-${i}`);
      await createSkyhooks(
        cp,
        names.map((name) => ({
          metadata: { name },
          spec: {
            nodeSelectors: { matchLabels: { type: 'kwok' } },
            interruptionBudget: { count: BUDGET },
            packages: { pkg: simulatedPackage(PHASE) },
          },
        })),
      );
      for (;;) {
        await new Promise((r) => setTimeout(r, SAMPLE_MS));
        const scrs = (await getJson<{ items: Skyhook[] }>(cp.kubeConfig, SKYHOOKS_PATH)).items;
        completeNodes = scrs.reduce((sum, scr) => sum + Number((scr.status?.completeNodes ?? '0/0').split('/')[0]), 0);
        const elapsed = Date.now() - started;
        samples.push([Math.round(elapsed / 1000), operator.peakRssMb()]);
        const heap = heapSamples.at(-1);
        say(
          `${Math.round(elapsed / 1000)} s: ${completeNodes}/${NODES * SKYHOOKS} node-SCRs complete, operator peak RSS ${operator.peakRssMb()} MB${heap ? `, heap used ${heap.heapUsedMb} of ${heap.heapTotalMb} MB` : ''}`,
        );
        if (completeNodes === NODES * SKYHOOKS || elapsed >= WINDOW_MS) break;
      }
    } finally {
      clearInterval(heapSampler);
    }
    const peakRssMb = operator.peakRssMb();
    const atEnd = await operator.memoryStats();
    const nodeOps = (await getJson<Counted>(cp.kubeConfig, `/apis/${API_GROUP}/${API_VERSION}/${KINDS.nodeOp.plural}`))
      .items.length;
    const jobs = (await getJson<Counted>(cp.kubeConfig, '/apis/batch/v1/jobs')).items.length;
    return {
      nodes: NODES,
      skyhooks: SKYHOOKS,
      budgetPerSkyhook: BUDGET,
      windowS: Math.round((Date.now() - started) / 1000),
      completeNodeSkyhooks: `${completeNodes}/${NODES * SKYHOOKS}`,
      rolloutFinished: completeNodes === NODES * SKYHOOKS,
      cachedAtEnd: { nodeOps, jobs },
      operatorRuntime: runtime,
      idleRssMb,
      peakRssMb,
      rssSamples: samples,
      heapMb: {
        idle: { used: idle.heapUsedMb, total: idle.heapTotalMb },
        peak: peaks(heapSamples),
        atEnd: { used: atEnd.heapUsedMb, total: atEnd.heapTotalMb, rss: atEnd.rssMb },
      },
      operatorCpuSeconds: operator.cpuSeconds(),
      target: `peak RSS <= ${TARGET_MB} MB at ${FULL_NODES} nodes`,
      met: NODES === FULL_NODES && WINDOW_MS === FULL_WINDOW_MS ? peakRssMb <= TARGET_MB : 'not judged (smaller run)',
    };
  });
}
