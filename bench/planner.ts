/**
 * `npm run bench -- planner`: the pure planner's cost per reconcile, full vs incremental (#18 item 1),
 * with no cluster. A simulated rollout (1000 and 5000 nodes × 1 and 5 SCRs of distinct priorities,
 * each selecting every node, budget 10 %) is warmed up, then each measured reconcile follows a few
 * node changes (ops finishing) and plans one SCR, as the controller does, twice: without the cache
 * (full) and with the cache the previous reconcile returned (incremental). Both must give the same
 * actions and requeue; a difference is counted in `mismatches` (it must be 0).
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
const RECONCILES = 12;
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

function runCase(c: Case): Record<string, unknown> {
  const sim = new Sim(c);
  // Warm-up: a few whole rounds, so every SCR is mid-rollout with ops running.
  for (let round = 0; round < 4; round++) {
    sim.apply(planNextActions(sim.input()).actions);
    if (round < 3) sim.finish();
  }
  let cache: PlanCache | undefined = planNextActions({ ...sim.input('scr-0'), cache: emptyPlanCache() }).cache;
  let full = 0;
  let incremental = 0;
  let mismatches = 0;
  let actions = 0;
  for (let i = 0; i < RECONCILES; i++) {
    sim.finish(CHANGES);
    const only = `scr-${c.scrs - 1 - (i % c.scrs)}`;
    const input = sim.input(only);
    const a = timed(() => planNextActions(input));
    const b = timed(() => planNextActions({ ...input, cache }));
    cache = b.value.cache;
    full += a.ms;
    incremental += b.ms;
    actions += a.value.actions.length;
    const same =
      JSON.stringify(a.value.actions) === JSON.stringify(b.value.actions) &&
      a.value.requeueAfterMs === b.value.requeueAfterMs;
    if (!same) mismatches++;
    sim.apply(a.value.actions);
  }
  const round = (ms: number): number => Math.round((ms / RECONCILES) * 100) / 100;
  return {
    nodes: c.nodes,
    scrs: c.scrs,
    fullMsPerReconcile: round(full),
    incrementalMsPerReconcile: round(incremental),
    speedup: Math.round((full / incremental) * 10) / 10,
    actionsPerReconcile: Math.round(actions / RECONCILES),
    mismatches,
  };
}

export async function planner(): Promise<Record<string, unknown>> {
  const cases = CASES.map((c) => {
    const result = runCase(c);
    console.error(JSON.stringify(result));
    return result;
  });
  return { reconciles: RECONCILES, changesBeforeEach: CHANGES, cases };
}
