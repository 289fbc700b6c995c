/**
 * One package (apply then config) rolled out by the operator process over 100 simulated nodes with
 * interruptionBudget 10 and a 5 s stage (two 2.5 s pod phases). Measures, from the same run:
 *  - wall time against the ideal ceil(nodes / budget) × stages × stage time, with the nominal 5 s
 *    and with the stage Jobs' measured median duration (control-plane overhead included) as stage time;
 *  - how soon the next step starts after a stage Job completes: the node's next stage, and the next
 *    node when a finished node frees a budget slot (both seen by one watch, so both clocks agree);
 *  - the operator's API writes per node-stage, from the API server's audit log, and the whole
 *    cluster's (Job controller, kubelets, … by writer and request; heartbeats apart).
 */
import {
  auditLogEnd,
  CLIENT_NODE_USER_AGENT,
  countClusterWrites,
  countWrites,
  writesPerNodeStage,
} from './audit-writes.js';
import { createSkyhooks, say, simulatedPackage, withBenchCluster } from './bench-cluster.js';
import { summarize } from './stats.js';
import { recordStageJobs, waitForSkyhook, type StageJob } from '../test/e2e/skyhook-cluster.js';

/** The figures; smaller ones help when looking into a cause (`rollout({ nodes: 20 })`). */
export interface RolloutOptions {
  nodes?: number;
  budget?: number;
}
const STAGES = 2; // apply, config: a first install without interrupts
const PHASE_MS = 2500;
const STAGE_MS = 2 * PHASE_MS;
const NAME = 'bench-rollout';
const ROLLOUT_TIMEOUT_MS = 8 * 60_000;
/** Writes that finish the rollout (the last status updates) land just after `complete` is seen. */
const SETTLE_MS = 3000;

const TARGETS = { wallRatio: 1.1, nextStepMs: 1000, writesPerNodeStage: 8, clusterWritesPerNodeStage: 12 };

/** Same node: when each stage Job after the first appeared, after the previous one completed. */
function nextStageGaps(byNode: Map<string, StageJob[]>): number[] {
  return [...byNode.values()].flatMap((jobs) => jobs.slice(1).map((job, i) => job.seenAt - (jobs[i]!.doneAt ?? NaN)));
}

/** Budget slots: the k-th node to finish frees the slot the (budget + k)-th node to start takes. */
function nextNodeGaps(byNode: Map<string, StageJob[]>, budget: number): number[] {
  const finishes = [...byNode.values()].map((jobs) => jobs.at(-1)?.doneAt ?? NaN).sort((a, b) => a - b);
  const starts = [...byNode.values()].map((jobs) => jobs[0]!.seenAt).sort((a, b) => a - b);
  return starts.slice(budget).map((start, k) => start - finishes[k]!);
}

export async function rollout(options: RolloutOptions = {}): Promise<Record<string, unknown>> {
  const { nodes: NODES = 100, budget: BUDGET = 10 } = options;
  return withBenchCluster(
    { nodes: NODES, podDurationMs: PHASE_MS, auditLog: true },
    async ({ cp, operator, runtime }) => {
      const auditLog = cp.auditLogPath!;
      const jobs = await recordStageJobs({ cp });
      const writesFrom = auditLogEnd(auditLog);
      const started = Date.now();
      say(`rolling out to ${NODES} nodes, budget ${BUDGET}`);
      const progress = setInterval(
        () =>
          say(
            `${[...jobs.jobs.values()].filter((j) => j.succeeded).length}/${NODES * STAGES} stage Jobs done, ${((Date.now() - started) / 1000).toFixed(0)} s`,
          ),
        15_000,
      );
      try {
        await createSkyhooks(cp, [
          {
            metadata: { name: NAME },
            spec: {
              nodeSelectors: { matchLabels: { type: 'kwok' } },
              interruptionBudget: { count: BUDGET },
              packages: { pkg: simulatedPackage(`${PHASE_MS}ms`) },
            },
          },
        ]);
        await waitForSkyhook({ cp }, NAME, (scr) => scr.status?.status === 'complete', ROLLOUT_TIMEOUT_MS);
      } finally {
        clearInterval(progress);
      }
      const wallMs = Date.now() - started;
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      await jobs.stop();
      const writes = countWrites(auditLog, writesFrom, CLIENT_NODE_USER_AGENT);
      const clusterWrites = countClusterWrites(auditLog, writesFrom);
      // Where the time went, for finding the cause of a miss.
      const operatorUse = {
        runtime,
        cpuSeconds: operator.cpuSeconds(),
        peakRssMb: operator.peakRssMb(),
        reconciles: await operator.reconcileStats(),
      };

      const byNode = new Map<string, StageJob[]>();
      for (const job of [...jobs.jobs.values()].sort((a, b) => a.seenAt - b.seenAt))
        byNode.set(job.node, [...(byNode.get(job.node) ?? []), job]);
      const nodeStages = [...byNode.values()].reduce((sum, list) => sum + list.length, 0);
      const jobDuration = summarize(
        [...jobs.jobs.values()].map((j) => (j.doneAt ?? NaN) - j.seenAt).filter(Number.isFinite),
      );
      const batches = Math.ceil(NODES / BUDGET);
      const idealMs = batches * STAGES * STAGE_MS;
      const idealMeasuredMs = batches * STAGES * jobDuration.p50;
      const sameNode = summarize(nextStageGaps(byNode));
      const nextNode = summarize(nextNodeGaps(byNode, BUDGET));
      const perNodeStage = writes.total / nodeStages;
      const eventWrites = Object.entries(writes.byRequest)
        .filter(([request]) => request.endsWith(' events'))
        .reduce((sum, [, n]) => sum + n, 0);
      return {
        nodes: NODES,
        budget: BUDGET,
        stages: STAGES,
        stageJobs: nodeStages,
        wallTime: {
          wallMs,
          stageMs: STAGE_MS,
          idealMs,
          ratio: round(wallMs / idealMs),
          measuredStageMs: jobDuration.p50,
          idealMeasuredMs,
          ratioMeasured: round(wallMs / idealMeasuredMs),
          target: `wall <= ${TARGETS.wallRatio} x ideal`,
          met: wallMs <= TARGETS.wallRatio * idealMs,
          metWithMeasuredStage: wallMs <= TARGETS.wallRatio * idealMeasuredMs,
        },
        eventDriven: {
          nextStageAfterJobDoneMs: sameNode,
          nextNodeAfterNodeDoneMs: nextNode,
          stageJobDurationMs: jobDuration,
          target: `next step <= ${TARGETS.nextStepMs} ms after a Job completes`,
          met: Math.max(sameNode.max, nextNode.max) <= TARGETS.nextStepMs,
        },
        apiWrites: {
          total: writes.total,
          refused: writes.refused,
          perNodeStage: round(perNodeStage),
          perNodeStageWithoutEvents: round((writes.total - eventWrites) / nodeStages),
          byRequest: writes.byRequest,
          target: `<= ${TARGETS.writesPerNodeStage} per node-stage`,
          met: perNodeStage <= TARGETS.writesPerNodeStage,
        },
        clusterWrites: {
          ...writesPerNodeStage(clusterWrites, nodeStages),
          target: `whole cluster <= ${TARGETS.clusterWritesPerNodeStage} per node-stage`,
          met: clusterWrites.total / nodeStages <= TARGETS.clusterWritesPerNodeStage,
        },
        operator: operatorUse,
      };
    },
  );
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
