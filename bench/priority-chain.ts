/**
 * `npm run bench -- priority-chain`: several Skyhooks of different priorities on the same nodes (each
 * node runs them one after the other, priority order), the operator as its own process over simulated
 * nodes. Reports, from the stage Jobs one watch recorded (one clock), the gap between one Skyhook's
 * last stage finishing on a node and the next Skyhook's first stage appearing there (`nextSkyhook`),
 * next to the gap between two stages of one Skyhook on a node (`nextStage`): a chain without idle
 * gaps hands over between Skyhooks as fast as between stages. BENCH_NODES and BENCH_SKYHOOKS change
 * the shape.
 */
import type { Skyhook } from '../src/api/skyhook.js';
import { waitForList } from '../src/kube/wait.js';
import { recordStageJobs, SKYHOOKS_PATH } from '../test/e2e/skyhook-cluster.js';
import { createSkyhooks, say, simulatedPackage, withBenchCluster } from './bench-cluster.js';
import { jobsBySkyhookNode, nextSkyhookGaps, nextStageGaps } from './rollout-gaps.js';
import { summarize } from './stats.js';

const PHASE_MS = 500;
const WINDOW_MS = 8 * 60_000;

const countFromEnv = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
};

export async function priorityChain(): Promise<Record<string, unknown>> {
  const nodes = countFromEnv('BENCH_NODES', 4);
  const count = countFromEnv('BENCH_SKYHOOKS', 4);
  const order = Array.from({ length: count }, (_, i) => `chain-${i + 1}`);
  return withBenchCluster({ nodes, podDurationMs: PHASE_MS }, async ({ cp }) => {
    const jobs = await recordStageJobs({ cp });
    const started = Date.now();
    try {
      await createSkyhooks(
        cp,
        order.map((name, i) => ({
          metadata: { name },
          spec: {
            nodeSelectors: { matchLabels: { type: 'kwok' } },
            priority: i + 1,
            interruptionBudget: { percent: 100 },
            packages: { pkg: simulatedPackage(`${PHASE_MS}ms`) },
          },
        })),
      );
      await waitForList<Skyhook>(
        cp.kubeConfig,
        SKYHOOKS_PATH,
        (all) => order.every((name) => all.find((s) => s.metadata.name === name)?.status?.status === 'complete'),
        WINDOW_MS,
        'every chained Skyhook complete',
      );
      const wallMs = Date.now() - started;
      say(`chain of ${count} Skyhooks on ${nodes} nodes complete in ${(wallMs / 1000).toFixed(1)} s`);
      const grouped = jobsBySkyhookNode(jobs.jobs.values());
      return {
        nodes,
        skyhooks: count,
        stageMs: 2 * PHASE_MS,
        wallMs,
        /** Last stage of one Skyhook done on a node → first stage of the next Skyhook seen there. */
        nextSkyhookGapMs: summarize(nextSkyhookGaps(grouped, order)),
        /** Stage done → the same Skyhook's next stage seen on that node. */
        nextStageGapMs: summarize(nextStageGaps(grouped)),
      };
    } finally {
      await jobs.stop();
    }
  });
}
