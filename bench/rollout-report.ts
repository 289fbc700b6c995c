/**
 * Turns what a rollout benchmark recorded (rollout.ts) into its printed figures: wall against the
 * ideal, reconcile quantiles from the operator's histogram, writes per node-stage, CPU per process
 * and per node-stage, what limited the run, and the targets.
 */
import {
  auditWritesFrom,
  CLIENT_NODE_USER_AGENT,
  clusterWritesOf,
  writesOf,
  writesPerNodeStage,
} from './audit-writes.js';
import { stageHandoffs } from './stage-handoff.js';
import type { BenchCluster } from './bench-cluster.js';
import { cores, type CpuSample, cpuReport, limitedBy } from './cpu-usage.js';
import { histogramDelta, histogramQuantile, parseHistogram } from './histogram.js';
import {
  hasRevisions,
  jobsBySkyhookNode,
  maxInProgress,
  maxStageJobsRunning,
  nextNodeGaps,
  nextStageGaps,
} from './rollout-gaps.js';
import { idealExplained, idealRolloutMs } from './rollout-ideal.js';
import { machineFloor } from './machine-floor.js';
import { judgeTargets } from './rollout-targets.js';
import type { RolloutShape } from './rollout.js';
import { summarize } from './stats.js';
import type { StageJob } from '../test/e2e/skyhook-cluster.js';

export interface RolloutRun {
  benchmark: string;
  shape: RolloutShape;
  fullSize: boolean;
  names: string[];
  stages: number;
  /** The stages each node runs, in order. */
  stageNames: readonly string[];
  stageMs: number;
  controlPlaneStartMs: number;
  completed: boolean;
  stalled?: string;
  wallMs: number;
  nodeSkyhooksComplete: number;
  jobs: StageJob[];
  metricsBefore: string;
  metricsAfter: string;
  cpuBefore: CpuSample;
  cpuAfter: CpuSample;
  load1AtEnd: number;
  maxLoad1: number;
  auditLog: string;
  writesFrom: number;
}

/** The control plane of the CPU figure: every component process and the operator. */
const CONTROL_PLANE = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok', 'operator'];
const RECONCILE_METRIC = 'controller_runtime_reconcile_time_seconds';

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

const PHASE_METRIC = 'skyhook_reconcile_phase_seconds';

/** The `_sum` of the series of `metric` carrying `label` in a text exposition (0 when absent). */
function histogramSum(text: string, metric: string, label: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${metric}_sum{`) && l.includes(label));
  return Number(line?.split(' ').at(-1) ?? 0);
}

export interface Quantiles {
  count: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  meanMs: number;
}

/** p50/p95/p99 and mean in ms of one series of a seconds histogram during the run (its growth over it). */
function quantilesOf(before: string, after: string, metric: string, name: string, value: string): Quantiles {
  const match = { [name]: value };
  const delta = histogramDelta(parseHistogram(before, metric, match), parseHistogram(after, metric, match));
  const count = delta.at(-1)?.count ?? 0;
  const label = `${name}="${value}"`;
  const sum = histogramSum(after, metric, label) - histogramSum(before, metric, label);
  return {
    count,
    p50Ms: Math.round(1000 * histogramQuantile(delta, 0.5)),
    p95Ms: Math.round(1000 * histogramQuantile(delta, 0.95)),
    p99Ms: Math.round(1000 * histogramQuantile(delta, 0.99)),
    meanMs: count > 0 ? Math.round((1000 * sum) / count) : NaN,
  };
}

/**
 * p50/p95/p99 and mean in ms of one controller's reconciles during the run. Many quick reconciles (a
 * wait for the caches, a requeue) hold the quantiles low while a few long ones hold the time: the
 * mean and p99 show those.
 */
export function reconcileQuantiles(before: string, after: string, controller: string): Quantiles {
  return quantilesOf(before, after, RECONCILE_METRIC, 'controller', controller);
}

/**
 * The Skyhook reconciles that planned, by phase (skyhook_reconcile_phase_seconds): the plan's own
 * time against the apply's, which is the API server's round trips.
 */
export function skyhookPhaseQuantiles(before: string, after: string): Record<string, Quantiles> {
  return Object.fromEntries(
    ['plan', 'apply', 'cleanup'].map((phase) => [phase, quantilesOf(before, after, PHASE_METRIC, 'phase', phase)]),
  );
}

export async function rolloutReport(run: RolloutRun, cluster: BenchCluster): Promise<Record<string, unknown>> {
  const { shape, names, stages, stageMs } = run;
  const ideal = { nodes: shape.nodes, scrs: names.map(() => ({ budget: shape.budget, stages })), stageMs };
  const idealMs = idealRolloutMs(ideal);
  const nodeStages = run.jobs.filter((j) => j.succeeded).length;
  const perNodeStage = (x: number, digits = 2): number => (nodeStages > 0 ? round(x / nodeStages, digits) : NaN);

  const grouped = jobsBySkyhookNode(run.jobs);
  const sameNode = summarize(nextStageGaps(grouped));
  const nextNode = summarize(nextNodeGaps(grouped, shape.budget, stages));
  const jobDuration = summarize(run.jobs.map((j) => (j.doneAt ?? NaN) - j.seenAt).filter(Number.isFinite));
  const budget = budgetCheck(grouped, stages, shape.budget);

  // The audit log read once (at 5000 nodes it is hundreds of MB): the write counts and the handoff come from it.
  const auditWrites = auditWritesFrom(run.auditLog, run.writesFrom);
  const operatorWrites = writesOf(auditWrites, CLIENT_NODE_USER_AGENT);
  // Running the stage Jobs' pods (spec.managedBy): the Job controller's work before, 2 writes instead of its 8.
  const jobRunnerWrites =
    (operatorWrites.byRequest['create pods'] ?? 0) + (operatorWrites.byRequest['patch jobs/status'] ?? 0);
  // Whole cluster: every writer but the heartbeats (node and API server Leases), which grow with wall time x nodes.
  const clusterWrites = writesPerNodeStage(clusterWritesOf(auditWrites), nodeStages);

  const cpu = cpuReport(run.cpuBefore, run.cpuAfter, cores());
  const controlPlaneCpuS = CONTROL_PLANE.reduce((sum, name) => sum + (cpu.processes[name]?.cpuSeconds ?? 0), 0);
  const operatorCpuS = cpu.processes['operator']?.cpuSeconds ?? NaN;
  const skyhook = reconcileQuantiles(run.metricsBefore, run.metricsAfter, 'skyhook');
  const nodeop = reconcileQuantiles(run.metricsBefore, run.metricsAfter, 'nodeop');
  const peakRssMb = cluster.operator.peakRssMb();
  const wallRatio = round(run.wallMs / idealMs);
  const floor = machineFloor({
    cpuSeconds: controlPlaneCpuS,
    nodeStagesDone: nodeStages,
    nodeStagesTotal: shape.nodes * stages * names.length,
    cores: cpu.cores,
    idealMs,
  });

  const targets = judgeTargets(
    run.benchmark,
    {
      completed: run.completed,
      wallRatio: run.completed ? wallRatio : NaN,
      skyhookReconcileP95Ms: skyhook.p95Ms,
      controlPlaneCpuPerNodeStageS: perNodeStage(controlPlaneCpuS, 3),
      operatorCpuPerNodeStageMs: perNodeStage(1000 * operatorCpuS, 1),
      operatorPeakRssMb: peakRssMb,
      operatorWritesPerNodeStage: perNodeStage(operatorWrites.total),
      operatorOwnWritesPerNodeStage: perNodeStage(operatorWrites.total - jobRunnerWrites),
      clusterWritesPerNodeStage: clusterWrites.wholeCluster,
      nextNodeP95Ms: nextNode.p95,
    },
    run.fullSize,
  );
  return {
    nodes: shape.nodes,
    budgetPerSkyhook: shape.budget,
    skyhooks: names.length,
    stages,
    stageMs,
    fullSize: run.fullSize,
    windowS: shape.windowMs / 1000,
    controlPlaneStartS: round(run.controlPlaneStartMs / 1000, 1),
    completed: run.completed,
    ...(run.stalled ? { stalled: run.stalled } : {}),
    // A safety bug, whatever else the run shows: listed first so no reader misses it.
    ...(budget.exceeded
      ? {
          violations: [
            `budget exceeded: ${budget.maxStageJobsRunningPerSkyhook} stage Jobs of one SCR running at once, budget ${shape.budget} ` +
              `(nodes started and not finished at once: ${budget.maxNodesInProgressPerSkyhook})`,
          ],
        }
      : {}),
    budget,
    progress: {
      stageJobsDone: `${nodeStages}/${shape.nodes * stages * names.length}`,
      nodeSkyhooksComplete: `${run.nodeSkyhooksComplete}/${shape.nodes * names.length}`,
    },
    wallS: round(run.wallMs / 1000, 1),
    idealS: idealMs / 1000,
    ratio: run.completed
      ? wallRatio
      : `not complete after ${round(run.wallMs / 1000, 0)} s (${wallRatio} x ideal so far)`,
    ideal: idealExplained(ideal),
    ratioWithMeasuredStage: round(run.wallMs / idealRolloutMs({ ...ideal, stageMs: jobDuration.p50 })),
    skyhookReconcile: skyhook,
    skyhookReconcilePhases: skyhookPhaseQuantiles(run.metricsBefore, run.metricsAfter),
    nodeopReconcile: nodeop,
    writesPerNodeStage: {
      operator: perNodeStage(operatorWrites.total),
      operatorRunningJobPods: perNodeStage(jobRunnerWrites),
      wholeCluster: clusterWrites.wholeCluster,
      heartbeats: clusterWrites.heartbeatsPerNodeStage,
    },
    operator: {
      cpuSeconds: operatorCpuS,
      cpuMsPerNodeStage: perNodeStage(1000 * operatorCpuS, 1),
      peakRssMb,
      rssFromFilesMb: cluster.operator.rssFromFilesMb(),
      runtime: cluster.runtime,
      reconciles: await cluster.operator.reconcileStats(),
    },
    controlPlaneCpu: {
      seconds: round(controlPlaneCpuS, 1),
      perNodeStageS: perNodeStage(controlPlaneCpuS, 3),
      processes: CONTROL_PLANE.concat(Object.keys(cpu.processes).filter((n) => !CONTROL_PLANE.includes(n))).map(
        (name) => ({ name, ...cpu.processes[name] }),
      ),
      otherProcesses: cpu.otherProcesses,
    },
    machine: {
      cores: cpu.cores,
      busyPct: cpu.machineBusyPct,
      busyCpuSeconds: cpu.machineBusyCpuSeconds,
      load1AtEnd: round(run.load1AtEnd),
      maxLoad1: round(run.maxLoad1),
    },
    limitedBy: limitedBy(cpu, run.maxLoad1),
    simulatedNodeHeartbeat: cluster.heartbeat,
    ...(floor ? { machineFloor: floor } : {}),
    eventDriven: {
      nextStageAfterJobDoneMs: sameNode,
      nextNodeAfterNodeDoneMs: nextNode,
      maxNodesInProgressPerSkyhook: budget.maxNodesInProgressPerSkyhook,
      stageJobDurationMs: jobDuration,
      // The same-node handoff hop by hop on the API server's clock (stage-handoff.ts): which component the wait is in.
      stageHandoffMs: stageHandoffs(auditWrites, run.stageNames),
    },
    writes: { operator: operatorWrites, wholeClusterPerNodeStage: clusterWrites },
    targets,
  };
}

/**
 * Whether the run kept each SCR within its budget, from the watcher's record of the stage Jobs
 * (rollout-gaps.ts maxInProgress), in the cluster's own order of events (resourceVersions) when the
 * record has them; the order of arrival at the watcher is given beside it, for comparison only: there,
 * two watches' different lag can show more nodes at once than the cluster ever had.
 */
export function budgetCheck(
  grouped: Map<string, StageJob[]>,
  stages: number,
  perSkyhook: number,
): {
  perSkyhook: number;
  maxNodesInProgressPerSkyhook: number;
  orderedBy: 'resourceVersion' | 'arrival';
  maxNodesInProgressByArrival: number;
  maxStageJobsRunningPerSkyhook: number;
  exceeded: boolean;
  note?: string;
} {
  const byRevision = hasRevisions(grouped);
  const order = byRevision ? 'revision' : 'arrival';
  const nodes = maxInProgress(grouped, stages, order);
  const running = maxStageJobsRunning(grouped, order);
  return {
    perSkyhook,
    maxNodesInProgressPerSkyhook: nodes,
    orderedBy: byRevision ? 'resourceVersion' : 'arrival',
    maxNodesInProgressByArrival: maxInProgress(grouped, stages, 'arrival'),
    maxStageJobsRunningPerSkyhook: running,
    // The budget bounds the nodes the SCR works on at once. A node blocked between two of its stages
    // (tainted not-ready, say) is not worked on: upstream's rule gives its slot to another node and
    // the node resumes once a slot frees. So nodes "started and not finished" may exceed the budget
    // while stage work never does; only the latter is a violation.
    exceeded: running > perSkyhook,
    ...(nodes > perSkyhook && running <= perSkyhook
      ? {
          note:
            `${nodes} nodes started and not finished at once, ${running} stage Jobs running at once (budget ${perSkyhook}): ` +
            'nodes blocked between two stages gave their slots up (upstream rule) and resumed later',
        }
      : {}),
  };
}
