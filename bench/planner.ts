/**
 * `npm run bench -- planner`: the pure planner's cost per reconcile, full vs incremental (#18 item 1),
 * with no cluster. A simulated rollout (1000 and 5000 nodes × 1 and 5 SCRs of distinct priorities,
 * each selecting every node, budget 10 %) is warmed up, then each measured reconcile follows a few
 * node changes (ops finishing) and plans one SCR, as the controller does, twice: without the cache
 * (full) and with the cache the previous reconcile returned (incremental). Both must give the same
 * actions and requeue; a difference is counted in `mismatches` (it must be 0). Figures are medians.
 * `node --expose-gc bench/run.ts planner` also prints `cacheHeapMb`, the heap a warm cache holds.
 */
import { planNextActions } from '../src/controllers/skyhook/plan/planner.js';
import { emptyPlanCache, type PlanCache } from '../src/controllers/skyhook/plan/plan-cache.js';
import { replayActions, type ReplaySnapshot } from '../src/controllers/skyhook/plan/replay-actions.js';
import type {
  NodeView,
  PlannerAction,
  PlannerInput,
  StageOpSummary,
} from '../src/controllers/skyhook/plan/planner-types.js';
import type { Skyhook } from '../src/api/skyhook.js';

const LABEL = 'bench.skyhook.nvidia.com/node';

interface Case {
  nodes: number;
  scrs: number;
}

const CASES: Case[] = process.env.PLANNER_CASE
  ? [JSON.parse(process.env.PLANNER_CASE) as Case]
  : [
      { nodes: 1000, scrs: 1 },
      { nodes: 1000, scrs: 5 },
      { nodes: 5000, scrs: 1 },
      { nodes: 5000, scrs: 5 },
    ];
/** Reconciles measured per case, and ops finishing before each (the "few node changes"). */
const RECONCILES = 15;
const CHANGES = 5;

function scr(index: number): Skyhook {
  return {
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'Skyhook',
    metadata: { name: `scr-${index}`, generation: 1, annotations: {} },
    spec: {
      priority: index + 1,
      nodeSelectors: { matchLabels: { [LABEL]: 'yes' } },
      interruptionBudget: { percent: 10 },
      packages: {
        aa: { version: '1.0.0', image: 'ghcr.io/nvidia/skyhook/agentless' },
        bb: { version: '1.0.0', image: 'ghcr.io/nvidia/skyhook/agentless', dependsOn: { aa: '1.0.0' } },
      },
    },
  };
}

function nodes(count: number): NodeView[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `node-${String(i).padStart(5, '0')}`,
    createdAt: 1_000 + i,
    labels: { [LABEL]: 'yes' },
    annotations: {},
    taints: [],
  }));
}

class Sim {
  readonly snapshot: ReplaySnapshot;
  now = 1_000_000;
  private uids = 0;

  constructor(c: Case) {
    this.snapshot = {
      nodes: nodes(c.nodes),
      stageOps: [],
      skyhooks: Array.from({ length: c.scrs }, (_, i) => scr(i)),
      configMaps: {},
    };
  }

  input(only?: string): PlannerInput {
    const { snapshot } = this;
    return {
      now: this.now,
      skyhooks: snapshot.skyhooks.map((skyhook) => ({
        skyhook,
        packageConfigMaps: snapshot.configMaps[skyhook.metadata.name!] ?? {},
      })),
      nodes: [...snapshot.nodes],
      stageOps: [...snapshot.stageOps],
      ...(only !== undefined ? { only } : {}),
    };
  }

  apply(actions: PlannerAction[]): void {
    replayActions(this.snapshot, actions, {
      opName: (a) => `${a.skyhook}-${a.package.name}-${a.stage}-${a.node}`,
      uid: () => `uid-${++this.uids}`,
      copyOnWrite: true,
    });
  }

  /** Finishes up to `count` running ops (all when undefined), as new objects (an informer's update). */
  finish(count?: number): void {
    let left = count ?? Infinity;
    this.snapshot.stageOps = this.snapshot.stageOps.map((op): StageOpSummary => {
      if (op.phase !== 'Running' || left <= 0) return op;
      left--;
      return { ...op, phase: 'Completed', finishedAt: this.now };
    });
    this.now += 1_000;
  }
}

function timed<T>(run: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = run();
  return { value, ms: performance.now() - start };
}

function heapMb(): number | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return undefined;
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const value = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return Math.round(value * 100) / 100;
}

function runCase(c: Case): Record<string, unknown> {
  const sim = new Sim(c);
  // Warm-up: a few whole rounds, so every SCR is mid-rollout with ops running.
  for (let round = 0; round < 4; round++) {
    sim.apply(planNextActions(sim.input()).actions);
    if (round < 3) sim.finish();
  }
  // The controller's cache is warm after its first reconciles: start from a run over every SCR.
  let cache: PlanCache | undefined = planNextActions({ ...sim.input(), cache: emptyPlanCache() }).cache;
  const full: number[] = [];
  const incremental: number[] = [];
  let mismatches = 0;
  let actions = 0;
  for (let i = 0; i < RECONCILES; i++) {
    sim.finish(CHANGES);
    const only = `scr-${c.scrs - 1 - (i % c.scrs)}`;
    const input = sim.input(only);
    // PLANNER_PROFILE=incremental: only the incremental runs (for node --cpu-prof).
    const a = process.env.PLANNER_PROFILE === 'incremental' ? undefined : timed(() => planNextActions(input));
    const b = timed(() => planNextActions({ ...input, cache }));
    cache = b.value.cache;
    full.push(a?.ms ?? 0);
    incremental.push(b.ms);
    actions += b.value.actions.length;
    const same =
      a === undefined ||
      (JSON.stringify(a.value.actions) === JSON.stringify(b.value.actions) &&
        a.value.requeueAfterMs === b.value.requeueAfterMs);
    if (!same) mismatches++;
    sim.apply((a ?? b).value.actions);
  }
  // The heap a warm cache holds (with `node --expose-gc`): built afresh over the final state.
  cache = undefined;
  const before = heapMb();
  const held = planNextActions({ ...sim.input(), cache: emptyPlanCache() }).cache;
  const after = heapMb();
  const cacheHeapMb =
    before === undefined || after === undefined || held === undefined
      ? undefined
      : Math.round((after - before) * 10) / 10;
  // Medians: the machine is shared, and a mean would carry other processes' bursts.
  const [fullMs, incrementalMs] = [median(full), median(incremental)];
  return {
    nodes: c.nodes,
    scrs: c.scrs,
    fullMsPerReconcile: fullMs,
    incrementalMsPerReconcile: incrementalMs,
    speedup: Math.round((fullMs / incrementalMs) * 10) / 10,
    actionsPerReconcile: Math.round(actions / RECONCILES),
    mismatches,
    ...(cacheHeapMb !== undefined ? { cacheHeapMb } : {}),
  };
}

export async function planner(): Promise<Record<string, unknown>> {
  // A small case first, not reported: the JIT warms up on it instead of on the first measured case.
  runCase({ nodes: 200, scrs: 2 });
  const cases = CASES.map((c) => {
    const result = runCase(c);
    console.error(JSON.stringify(result));
    return result;
  });
  return { reconciles: RECONCILES, changesBeforeEach: CHANGES, cases };
}
