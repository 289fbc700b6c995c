/**
 * The rollout benchmarks: one package (apply then config, 5 s per stage as two 2.5 s pod phases)
 * rolled out by the operator process over simulated nodes, from one or several SCRs at once:
 *  - rollout-100: 100 nodes, budget 10 (issue 6's figures and issue 18's 100-node targets);
 *  - rollout-1000: 1000 nodes, budget 100;
 *  - rollout-1000x5: 1000 nodes, 5 SCRs of distinct priorities each selecting every node, budget 100 each;
 *  - rollout-5000: 5000 nodes, budget 500;
 *  - rollout-1000-signed: rollout-1000 with the package image in a local registry, signed by cosign,
 *    under a PackageTrustPolicy in Enforce mode; it adds the registry requests the operator made
 *    (per package version and per node) and fails if they grew with the nodes (rollout-signed.ts).
 * Each prints wall time against the ideal (rollout-ideal.ts), the Skyhook reconcile p50/p95 (from the
 * operator's histogram), writes per node-stage of the operator and of the whole cluster (audit log),
 * the operator's CPU and peak RSS, the CPU of every control-plane process, the machine's busy % and
 * load, what limited the run, and the targets (rollout-targets.ts). A run ends when it completes, when
 * no stage Job finished for a while (stalled: rollout-stall.ts), or at its window, a cap sized for what
 * this 2-core machine needs; it then reports how far it got. BENCH_NODES and BENCH_BUDGET shrink a run
 * to look into a cause (targets are then not judged); BENCH_WINDOW_S and BENCH_STALL_S change the limits.
 */
import { getJson } from '../src/kube/wait.js';
import { waitForList } from '../src/kube/wait.js';
import type { Skyhook } from '../src/api/skyhook.js';
import { auditLogEnd } from './audit-writes.js';
import { createSkyhooks, say, simulatedPackage, withBenchCluster } from './bench-cluster.js';
import { cores, type CpuSample, cpuReport, load1, readCpuSample } from './cpu-usage.js';
import { rolloutReport, type RolloutRun } from './rollout-report.js';
import { StallWatch } from './rollout-stall.js';
import { type SignedRollout, startSignedRollout } from './rollout-signed.js';
import { recordStageJobs, SKYHOOKS_PATH } from '../test/e2e/skyhook-cluster.js';

export interface RolloutShape {
  nodes: number;
  /** Per SCR. */
  budget: number;
  /** SCRs selecting every node, priorities 1, 2, … */
  skyhooks: number;
  /** The cap on the rollout's wall time: the largest take as long as the machine floor says (about 10 × their ideal here). */
  windowMs: number;
  /** The package image signed in a local registry, under an Enforce PackageTrustPolicy (rollout-signed.ts). */
  signed?: boolean;
}

export const ROLLOUTS: Record<string, RolloutShape> = {
  'rollout-100': { nodes: 100, budget: 10, skyhooks: 1, windowMs: 5 * 60_000 },
  'rollout-1000': { nodes: 1000, budget: 100, skyhooks: 1, windowMs: 8 * 60_000 },
  'rollout-1000x5': { nodes: 1000, budget: 100, skyhooks: 5, windowMs: 30 * 60_000 },
  'rollout-5000': { nodes: 5000, budget: 500, skyhooks: 1, windowMs: 30 * 60_000 },
  'rollout-1000-signed': { nodes: 1000, budget: 100, skyhooks: 1, windowMs: 8 * 60_000, signed: true },
};
/** The stages each node runs, in order: a first install without interrupts. */
export const STAGE_NAMES = ['apply', 'config'] as const;
export const STAGES = STAGE_NAMES.length;
const PHASE_MS = 2500;
export const STAGE_MS = 2 * PHASE_MS;
const PROGRESS_MS = 15_000;
/** No stage Job finished for this long: stalled (a stage takes 5 s; a busy machine's worst hand-offs take seconds). */
const STALL_MS = 120_000;
const STALL_CHECK_MS = 5000;
/** Writes that finish the rollout (the last status updates) land just after `complete` is seen. */
const SETTLE_MS = 3000;

function positiveEnv(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

/** The benchmark's shape with the BENCH_* overrides, and whether it is still the full size. */
function shapeOf(benchmark: string): { shape: RolloutShape; fullSize: boolean; stallMs: number } {
  const full = ROLLOUTS[benchmark];
  if (!full) throw new Error(`unknown rollout benchmark ${benchmark}`);
  const windowS = positiveEnv('BENCH_WINDOW_S');
  const shape = {
    ...full,
    nodes: positiveEnv('BENCH_NODES') ?? full.nodes,
    budget: positiveEnv('BENCH_BUDGET') ?? full.budget,
    windowMs: windowS !== undefined ? windowS * 1000 : full.windowMs,
  };
  // A shorter window still measures the full size: a run it cuts short fails "completes" instead.
  const fullSize = shape.nodes === full.nodes && shape.budget === full.budget;
  const stallS = positiveEnv('BENCH_STALL_S');
  return { shape, fullSize, stallMs: stallS !== undefined ? stallS * 1000 : STALL_MS };
}

function skyhookNames(shape: RolloutShape): string[] {
  return shape.skyhooks === 1
    ? ['bench-rollout']
    : Array.from({ length: shape.skyhooks }, (_, i) => `bench-rollout-${i + 1}`);
}

function completeNodesOf(scrs: Skyhook[], names: string[]): number {
  return scrs
    .filter((scr) => names.includes(scr.metadata.name ?? ''))
    .reduce((sum, scr) => sum + Number((scr.status?.completeNodes ?? '0/0').split('/')[0]), 0);
}

export function rolloutBenchmark(benchmark: string): () => Promise<Record<string, unknown>> {
  return async () => {
    const { shape } = shapeOf(benchmark);
    if (!shape.signed) return rolloutRun(benchmark, undefined);
    const signed = await startSignedRollout(simulatedPackage(`${PHASE_MS}ms`).version);
    try {
      return await rolloutRun(benchmark, signed);
    } finally {
      await signed.stop();
    }
  };
}

async function rolloutRun(benchmark: string, signed: SignedRollout | undefined): Promise<Record<string, unknown>> {
  const { shape, fullSize, stallMs } = shapeOf(benchmark);
  const names = skyhookNames(shape);
  const clusterOptions = { nodes: shape.nodes, podDurationMs: PHASE_MS, auditLog: true };
  return withBenchCluster(
    clusterOptions,
    async (cluster) => {
      const { cp, operator } = cluster;
      const auditLog = cp.auditLogPath!;
      const jobs = await recordStageJobs({ cp });
      // Before the writes are counted: the policy's own status write is not the rollout's.
      await signed?.install(cp);
      const processes = [
        ...cp.processes(),
        { name: 'operator', pid: operator.pid },
        { name: 'bench (its watches)', pid: process.pid },
      ];
      const writesFrom = auditLogEnd(auditLog);
      const metricsBefore = await operator.metricsText();
      const cpuBefore = readCpuSample(processes);
      signed?.startCounting();
      const started = Date.now();
      const expectedJobs = shape.nodes * STAGES * names.length;
      let maxLoad1 = load1();
      let lastSample: CpuSample = cpuBefore;
      const jobsDone = (): number => [...jobs.jobs.values()].filter((j) => j.succeeded).length;
      const stop = new AbortController();
      const stallWatch = new StallWatch(stallMs, started);
      const stallCheck = setInterval(() => {
        const stall = stallWatch.check(jobsDone(), Date.now());
        if (stall !== undefined) stop.abort(new Error(stall));
      }, STALL_CHECK_MS);
      const progress = setInterval(() => {
        const sample = readCpuSample(processes);
        const busy = cpuReport(lastSample, sample, cores()).machineBusyPct;
        lastSample = sample;
        maxLoad1 = Math.max(maxLoad1, load1());
        const done = jobsDone();
        // The time of this tick: the SCR list may answer late on a loaded API server.
        const elapsedS = ((Date.now() - started) / 1000).toFixed(0);
        // The heap beside the RSS: whether a rise is JS objects (heap used), V8's reserve (heap total) or outside V8.
        void Promise.all([
          getJson<{ items: Skyhook[] }>(cp.kubeConfig, SKYHOOKS_PATH),
          operator.memoryStats().catch(() => undefined),
        ]).then(
          ([{ items }, memory]) =>
            say(
              `${benchmark} ${elapsedS} s: ${done}/${expectedJobs} stage Jobs done, ` +
                `${completeNodesOf(items, names)}/${shape.nodes * names.length} node-SCRs complete; operator ` +
                `${((sample.processes['operator'] ?? 0) / 100 - (cpuBefore.processes['operator'] ?? 0) / 100).toFixed(0)} s CPU, ` +
                `peak RSS ${operator.peakRssMb()} MB` +
                (memory
                  ? ` (now ${memory.rssMb.toFixed(0)}: heap ${memory.heapUsedMb.toFixed(0)} used of ${memory.heapTotalMb.toFixed(0)}, external ${memory.externalMb.toFixed(0)})`
                  : '') +
                `; machine ${busy} % busy, load ${load1().toFixed(1)}`,
            ),
          () => undefined,
        );
      }, PROGRESS_MS);
      let completed = false;
      let stalled: string | undefined;
      try {
        say(
          `${benchmark}: ${shape.nodes} nodes, ${names.length} SCR(s), budget ${shape.budget} each, ` +
            `window ${shape.windowMs / 1000} s, stalled after ${stallMs / 1000} s without a stage Job done`,
        );
        await createSkyhooks(
          cp,
          names.map((name, i) => ({
            metadata: { name },
            spec: {
              priority: i + 1,
              nodeSelectors: { matchLabels: { type: 'kwok' } },
              interruptionBudget: { count: shape.budget },
              packages: {
                pkg: signed ? signed.pkg(simulatedPackage(`${PHASE_MS}ms`)) : simulatedPackage(`${PHASE_MS}ms`),
              },
            },
          })),
        );
        await waitForList<Skyhook>(
          cp.kubeConfig,
          SKYHOOKS_PATH,
          (all) => names.every((name) => all.some((s) => s.metadata.name === name && s.status?.status === 'complete')),
          Math.max(1000, started + shape.windowMs - Date.now()),
          `${names.length} Skyhook(s) complete`,
          { signal: stop.signal },
        );
        completed = true;
      } catch (error) {
        stalled = error instanceof Error ? error.message.slice(0, 300) : String(error);
        say(`${benchmark}: not complete (${stalled})`);
      } finally {
        clearInterval(progress);
        clearInterval(stallCheck);
      }
      const wallMs = Date.now() - started;
      if (completed) await new Promise((r) => setTimeout(r, SETTLE_MS));
      const cpuAfter = readCpuSample(processes);
      maxLoad1 = Math.max(maxLoad1, load1());
      const scrs = (await getJson<{ items: Skyhook[] }>(cp.kubeConfig, SKYHOOKS_PATH)).items;
      await jobs.stop();
      const run: RolloutRun = {
        benchmark,
        shape,
        fullSize,
        names,
        stages: STAGES,
        stageNames: STAGE_NAMES,
        stageMs: STAGE_MS,
        controlPlaneStartMs: cp.startupMs,
        completed,
        ...(stalled !== undefined ? { stalled } : {}),
        wallMs,
        nodeSkyhooksComplete: completeNodesOf(scrs, names),
        jobs: [...jobs.jobs.values()],
        metricsBefore,
        metricsAfter: await operator.metricsText(),
        cpuBefore,
        cpuAfter,
        load1AtEnd: load1(),
        maxLoad1,
        auditLog,
        writesFrom,
      };
      const report = await rolloutReport(run, cluster);
      return signed ? { ...report, ...(await signed.report(cp, shape.nodes)) } : report;
    },
    signed?.operatorSettings,
  );
}
