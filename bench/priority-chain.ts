/**
 * `npm run bench -- priority-chain`: several Skyhooks of different priorities on the same nodes (each
 * node runs them one after the other, priority order), the operator as its own process over simulated
 * nodes. Two chains, one after the other on the same nodes:
 *   - `plain`: every Skyhook created at once;
 *   - `paused`: the first Skyhook created paused, the others waiting behind it on every node, then
 *     unpaused (upstream's strict-order scenario);
 *   - `staggered`: the first node tainted (blocked) until the first Skyhook is complete on the others,
 *     so the nodes run different priorities at once (the other half of that scenario).
 * Each reports, from the stage Jobs one watch recorded (one clock), the gap between one Skyhook's
 * last stage finishing on a node and the next Skyhook's first stage appearing there (`nextSkyhook`),
 * next to the gap between two stages of one Skyhook on a node (`nextStage`): a chain without idle
 * gaps hands over between Skyhooks as fast as between stages. The paused chain also reports how soon
 * after the unpause the first stage starts on each node. BENCH_NODES and BENCH_SKYHOOKS change the shape.
 */
import type { Skyhook } from '../src/api/skyhook.js';
import { SKYHOOK_ANNOTATIONS } from '../src/api/names.js';
import type { ControlPlane } from '../src/sandbox/control-plane.js';
import { getJson, waitForList } from '../src/kube/wait.js';
import { recordStageJobs, SKYHOOKS_PATH, type JobRecorder } from '../test/e2e/skyhook-cluster.js';
import { createSkyhooks, say, simulatedPackage, withBenchCluster } from './bench-cluster.js';
import { jobsBySkyhookNode, nextSkyhookGaps, nextStageGaps } from './rollout-gaps.js';
import { summarize } from './stats.js';

const PHASE_MS = 500;
const WINDOW_MS = 8 * 60_000;
/** How long the paused chain's later Skyhooks wait behind the paused one before it is resumed. */
const HELD_MS = 5_000;

const countFromEnv = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
};

const statusOf = (all: Skyhook[], name: string): string | undefined =>
  all.find((s) => s.metadata.name === name)?.status?.status;

async function kubectl(cp: ControlPlane, args: string[]): Promise<void> {
  const run = await cp.kubectl(args);
  if (run.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${run.stderr}`);
}

/** The name of the cluster's first simulated node. */
async function firstNode(cp: ControlPlane): Promise<string> {
  const { items } = await getJson<{ items: { metadata: { name: string } }[] }>(cp.kubeConfig, '/api/v1/nodes');
  const names = items.map((n) => n.metadata.name).sort();
  if (names.length < 2) throw new Error('the staggered chain needs BENCH_NODES >= 2');
  return names[0]!;
}

/** Runs one chain of `count` Skyhooks named `<prefix>-<i>` (priority i) and returns its figures. */
type Variant = 'plain' | 'paused' | 'staggered';
const BLOCK_TAINT = 'bench-block=true:NoSchedule';

async function chain(
  cp: ControlPlane,
  jobs: JobRecorder,
  prefix: string,
  count: number,
  variant: Variant,
): Promise<Record<string, unknown>> {
  const paused = variant === 'paused';
  const blocked = variant === 'staggered' ? await firstNode(cp) : undefined;
  if (blocked) await kubectl(cp, ['taint', 'node', blocked, BLOCK_TAINT]);
  const order = Array.from({ length: count }, (_, i) => `${prefix}-${i + 1}`);
  const created = Date.now();
  await createSkyhooks(
    cp,
    order.map((name, i) => ({
      metadata: { name, ...(paused && i === 0 ? { annotations: { [SKYHOOK_ANNOTATIONS.pause]: 'true' } } : {}) },
      spec: {
        nodeSelectors: { matchLabels: { type: 'kwok' } },
        priority: i + 1,
        interruptionBudget: { percent: 100 },
        packages: { pkg: simulatedPackage(`${PHASE_MS}ms`) },
      },
    })),
  );
  let started = created;
  if (paused) {
    await waitForList<Skyhook>(
      cp.kubeConfig,
      SKYHOOKS_PATH,
      (all) => statusOf(all, order[0]!) === 'paused' && order.slice(1).every((n) => statusOf(all, n) === 'waiting'),
      WINDOW_MS,
      `${prefix}: the first Skyhook paused, the others waiting`,
    );
    await new Promise((resolve) => setTimeout(resolve, HELD_MS));
    started = Date.now();
    await kubectl(cp, ['annotate', 'skyhooks.skyhook.nvidia.com', order[0]!, `${SKYHOOK_ANNOTATIONS.pause}-`]);
    say(`${prefix}: ${order[0]} unpaused`);
  }
  if (blocked) {
    await waitForList<Skyhook>(
      cp.kubeConfig,
      SKYHOOKS_PATH,
      (all) => {
        const first = all.find((s) => s.metadata.name === order[0])?.status?.nodeStatus ?? {};
        const others = Object.entries(first).filter(([node]) => node !== blocked);
        return others.length > 0 && others.every(([, status]) => status === 'complete');
      },
      WINDOW_MS,
      `${prefix}: ${order[0]} complete everywhere but ${blocked}`,
    );
    await kubectl(cp, ['taint', 'node', blocked, 'bench-block-']);
    say(`${prefix}: ${blocked} unblocked`);
  }
  await waitForList<Skyhook>(
    cp.kubeConfig,
    SKYHOOKS_PATH,
    (all) => order.every((name) => statusOf(all, name) === 'complete'),
    WINDOW_MS,
    `${prefix}: every chained Skyhook complete`,
  );
  const wallMs = Date.now() - started;
  say(`${prefix}: chain of ${count} Skyhooks complete in ${(wallMs / 1000).toFixed(1)} s`);
  const mine = [...jobs.jobs.values()].filter((job) => order.includes(job.skyhook));
  const grouped = jobsBySkyhookNode(mine);
  const firstStages = [...grouped.entries()]
    .filter(([key]) => key.startsWith(`${order[0]}/`))
    .map(([, list]) => list[0]!.seenAt - started);
  return {
    /** From creation (plain, staggered) or the unpause (paused) to every Skyhook complete. */
    wallMs,
    ...(paused ? { unpauseToFirstStageMs: summarize(firstStages) } : {}),
    /** Last stage of one Skyhook done on a node → first stage of the next Skyhook seen there. */
    nextSkyhookGapMs: summarize(nextSkyhookGaps(grouped, order)),
    /** Stage done → the same Skyhook's next stage seen on that node. */
    nextStageGapMs: summarize(nextStageGaps(grouped)),
  };
}

export async function priorityChain(): Promise<Record<string, unknown>> {
  const nodes = countFromEnv('BENCH_NODES', 4);
  const count = countFromEnv('BENCH_SKYHOOKS', 4);
  return withBenchCluster({ nodes, podDurationMs: PHASE_MS }, async ({ cp }) => {
    const jobs = await recordStageJobs({ cp });
    try {
      const plain = await chain(cp, jobs, 'chain', count, 'plain');
      const paused = await chain(cp, jobs, 'paused', count, 'paused');
      const staggered = await chain(cp, jobs, 'staggered', count, 'staggered');
      return { nodes, skyhooks: count, stageMs: 2 * PHASE_MS, plain, paused, staggered };
    } finally {
      await jobs.stop();
    }
  });
}
