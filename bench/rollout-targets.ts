/**
 * The targets of the rollout benchmarks (issue 18's) and whether a run met them. A target is judged
 * only at the benchmark's full size: a run shrunk with BENCH_NODES or BENCH_BUDGET to look into a
 * cause says "not judged". Pure, unit-tested.
 */

/** What a run measured that the targets look at (NaN: not measured). */
export interface RolloutFigures {
  completed: boolean;
  wallRatio: number;
  skyhookReconcileP95Ms: number;
  /** apiserver, etcd, KCM, scheduler, kwok and the operator, over the rollout, per node-stage done. */
  controlPlaneCpuPerNodeStageS: number;
  operatorCpuPerNodeStageMs: number;
  operatorPeakRssMb: number;
  operatorWritesPerNodeStage: number;
  /**
   * The operator's writes but those of running the stage Jobs' pods (pod creates, Job status): the
   * Job controller's work (8 writes per Job) that the NodeOp controller does itself in 2 since
   * `spec.managedBy`, counted in the whole cluster's figure either way.
   */
  operatorOwnWritesPerNodeStage: number;
  clusterWritesPerNodeStage: number;
  /** From a node's last stage done to the next node's first Job (a freed budget slot refilled), p95. */
  nextNodeP95Ms: number;
}

export interface TargetResult {
  target: string;
  measured: number | boolean;
  met: boolean | 'not judged (smaller run)' | 'not judged (not complete)';
}

interface Target {
  target: string;
  measure: (f: RolloutFigures) => number | boolean;
  ok: (value: number | boolean) => boolean;
}

const atMost =
  (limit: number) =>
  (value: number | boolean): boolean =>
    typeof value === 'number' && value <= limit;
const completes: Target = { target: 'completes without stalling', measure: (f) => f.completed, ok: (v) => v === true };
const wall = (ratio: number): Target => ({
  target: `wall <= ${ratio} x ideal`,
  measure: (f) => f.wallRatio,
  ok: atMost(ratio),
});
const rss = (mb: number): Target => ({
  target: `operator peak RSS <= ${mb} MB`,
  measure: (f) => f.operatorPeakRssMb,
  ok: atMost(mb),
});
const reconcileP95 = (ms: number): Target => ({
  target: `Skyhook reconcile p95 <= ${ms} ms`,
  measure: (f) => f.skyhookReconcileP95Ms,
  ok: atMost(ms),
});

const ROLLOUT_1000: Target[] = [
  completes,
  wall(1.5),
  reconcileP95(100),
  {
    target: 'whole control-plane CPU <= 0.15 s per node-stage',
    measure: (f) => f.controlPlaneCpuPerNodeStageS,
    ok: atMost(0.15),
  },
  rss(150),
  { target: 'a freed budget slot refilled within 200 ms (p95)', measure: (f) => f.nextNodeP95Ms, ok: atMost(200) },
];

export const ROLLOUT_TARGETS: Record<string, Target[]> = {
  'rollout-100': [
    completes,
    wall(1.05),
    { target: 'operator CPU <= 40 ms per node-stage', measure: (f) => f.operatorCpuPerNodeStageMs, ok: atMost(40) },
    rss(120),
    {
      target: 'whole-cluster writes (heartbeats apart) <= 12 per node-stage',
      measure: (f) => f.clusterWritesPerNodeStage,
      ok: atMost(12),
    },
    {
      target: "operator writes <= 8 per node-stage (running the Jobs' pods apart: pod creates and Job status)",
      measure: (f) => f.operatorOwnWritesPerNodeStage,
      ok: atMost(8),
    },
  ],
  'rollout-1000': ROLLOUT_1000,
  // Verifying the package once (not per node) must leave the rollout's figures where unsigned ones are.
  'rollout-1000-signed': ROLLOUT_1000,
  'rollout-1000x5': [completes, wall(1.5)],
  'rollout-5000': [completes, rss(400), reconcileP95(300)],
};

/** Figures of a run cut short by its window are of part of the rollout: only "completes" is judged then. */
export function judgeTargets(benchmark: string, figures: RolloutFigures, fullSize: boolean): TargetResult[] {
  return (ROLLOUT_TARGETS[benchmark] ?? []).map((t) => {
    const measured = t.measure(figures);
    const met: TargetResult['met'] = !fullSize
      ? 'not judged (smaller run)'
      : figures.completed || t === completes
        ? t.ok(measured)
        : 'not judged (not complete)';
    return { target: t.target, measured, met };
  });
}
