import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Package } from '../../../../../src/api/skyhook.js';
import { budgetCeiling } from '../../../../../src/controllers/skyhook/plan/rollout.js';
import type { CreateStageOp, PlannerAction } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import type { Interrupt } from '../../../../../src/api/skyhook.js';
import { SKYHOOK_ANNOTATIONS } from '../../../../../src/api/names.js';
import { planNextActions } from '../../../../../src/controllers/skyhook/plan/planner.js';
import { emptyPlanCache, type PlanCache } from '../../../../../src/controllers/skyhook/plan/plan-cache.js';
import { budget } from '../../disruption/budgets.js';
import {
  applyActions,
  node,
  pkg,
  plan,
  plannerInput,
  policy,
  scr,
  SELECTOR_LABEL,
  settleRunningOps,
  world,
  type World,
} from './world.js';

/** Up to four packages; each may depend on earlier ones only, so the graph is acyclic. */
const packagesArb = fc
  .array(fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 4 })
  .map((rows) => {
    const names = ['aa', 'bb', 'cc', 'dd'].slice(0, rows.length);
    const packages: Record<string, Package> = {};
    names.forEach((name, i) => {
      const parents = names.slice(0, i).filter((_, j) => rows[i]![j]);
      packages[name] = pkg(
        '1.0.0',
        parents.length > 0 ? { dependsOn: Object.fromEntries(parents.map((p) => [p, '1.0.0'])) } : {},
      );
    });
    return packages;
  });

const budgetArb = fc.oneof(
  fc.record({ count: fc.integer({ min: 0, max: 4 }) }),
  fc.record({ percent: fc.integer({ min: 0, max: 100 }) }),
);

/** Per round: what happens to each running op (0 = keeps running, 1 = completes, 2 = fails), and how much of the plan is applied. */
const roundArb = fc.record({
  outcomes: fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 8 }),
  applied: fc.double({ min: 0, max: 1, noNaN: true }),
});

const scenarioArb = fc.record({
  nodes: fc.integer({ min: 1, max: 6 }),
  budget: budgetArb,
  packages: packagesArb,
  rounds: fc.array(roundArb, { minLength: 5, maxLength: 40 }),
  crashes: fc.boolean(),
});

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

interface Run {
  w: World;
  ceiling: number;
}

/** Plays a scenario: random outcomes, and (with crashes) only a random prefix of each plan applied. */
function play(s: Scenario, onPlan: (run: Run, actions: PlannerAction[], completed: Set<string>) => void): Run {
  const nodes = Array.from({ length: s.nodes }, (_, i) => node(`n${i}`, i));
  const w = world([scr('p', { interruptionBudget: s.budget, packages: s.packages })], nodes);
  const run: Run = { w, ceiling: budgetCeiling(s.budget, s.nodes) };
  const completed = new Set<string>();
  for (const round of s.rounds) {
    const { actions } = plan(w);
    onPlan(run, actions, completed);
    const kept = s.crashes ? actions.slice(0, Math.floor(actions.length * round.applied)) : actions;
    applyActions(w, kept);
    let i = 0;
    w.ops = w.ops.map((op) => {
      if (op.phase !== 'Running') return op;
      const outcome = round.outcomes[i++] ?? 1;
      if (outcome === 1) completed.add(`${op.node}/${op.package}/${op.stage}`);
      return outcome === 0
        ? op
        : { ...op, phase: outcome === 1 ? 'Completed' : 'Failed', restarts: outcome === 2 ? 1 : 0, finishedAt: w.now };
    });
    w.now += 15_000;
  }
  return run;
}

const nodesAtWork = (w: World): number =>
  w.nodes.filter((n) => {
    const status = n.annotations['skyhook.nvidia.com/status_p'];
    return (
      status === 'in_progress' ||
      status === 'erroring' ||
      w.ops.some((op) => op.node === n.name && (op.phase === 'Running' || op.phase === 'Pending'))
    );
  }).length;

describe('planner properties', () => {
  it('never has more nodes at work than the budget allows, even when plans are cut short by crashes', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        play(s, (run) => {
          expect(nodesAtWork(run.w)).toBeLessThanOrEqual(run.ceiling);
        });
        return true;
      }),
      { numRuns: 150 },
    );
  });

  it('never starts a stage out of order: config after apply, a child after its parents are complete', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        play(s, (_run, actions, completed) => {
          for (const create of actions.filter((a): a is CreateStageOp => a.kind === 'createStageOp')) {
            const done = (pkgName: string, stage: string) => completed.has(`${create.node}/${pkgName}/${stage}`);
            if (create.stage === 'config') expect(done(create.package.name, 'apply')).toBe(true);
            for (const parent of Object.keys(s.packages[create.package.name]?.dependsOn ?? {})) {
              expect(done(parent, 'config')).toBe(true);
            }
          }
        });
        return true;
      }),
      { numRuns: 150 },
    );
  });

  it('is idempotent: planning again after applying a plan changes nothing, and no completed stage is ever re-created', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const createdAfterDone: string[] = [];
        play(s, (current, actions, completed) => {
          for (const create of actions.filter((a): a is CreateStageOp => a.kind === 'createStageOp')) {
            const key = `${create.node}/${create.package.name}/${create.stage}`;
            if (completed.has(key)) createdAfterDone.push(key);
          }
          // With no op finishing meanwhile, applying the plan and planning again converges: at once,
          // or one pass later when the plan deleted ops whose names a re-run needs.
          const probe = structuredClone(current.w);
          applyActions(probe, actions);
          let again = plan(probe).actions.filter((a) => a.kind !== 'event');
          if (actions.some((a) => a.kind === 'deleteStageOp')) {
            applyActions(probe, again);
            again = plan(probe).actions.filter((a) => a.kind !== 'event');
          }
          expect(again).toEqual([]);
        });
        expect(createdAfterDone).toEqual([]);
        return true;
      }),
      { numRuns: 150 },
    );
  });
});

/**
 * Incremental planning (plan-cache.ts): on random histories of several SCRs (priorities, interrupts,
 * pause, version bumps, nodes relabelled or tainted, ops finishing or failing, plans cut short, random
 * `only`, cluster budgets or not), planning with the cache the previous run returned gives the same
 * actions and requeue as planning from scratch, at every step.
 */
const interruptArb = fc.oneof(
  fc.constant(undefined),
  fc.constant<Interrupt>({ type: 'reboot' }),
  fc.constant<Interrupt>({ type: 'service', services: ['containerd'] }),
);
const incrementalSkyhookArb = fc.record({
  packages: packagesArb,
  interrupt: interruptArb,
  budget: budgetArb,
  priority: fc.integer({ min: 1, max: 3 }),
  sequencingAll: fc.boolean(),
  /** Interrupts wait for pods labelled KEEP (podNonInterruptLabels). */
  barrier: fc.boolean(),
  /** Under a DeploymentPolicy whose maintenance window is open 10:00-14:00 UTC. */
  windowed: fc.boolean(),
  /** Every node, or one group's (SCRs on disjoint groups compete for the cluster budget, not by priority). */
  group: fc.constantFrom(undefined, 'a', 'b'),
});
const changeArb = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('pause' as const), scr: fc.nat() }),
  fc.record({ kind: fc.constant('bump' as const), scr: fc.nat() }),
  fc.record({ kind: fc.constant('relabel' as const), node: fc.nat() }),
  fc.record({ kind: fc.constant('taint' as const), node: fc.nat() }),
  fc.record({ kind: fc.constant('pods' as const), node: fc.nat() }),
);
const incrementalRoundArb = fc.record({
  outcomes: fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 8 }),
  applied: fc.double({ min: 0, max: 1, noNaN: true }),
  only: fc.option(fc.nat(), { nil: undefined }),
  changes: fc.array(changeArb, { maxLength: 2 }),
  advanceMs: fc.oneof(fc.integer({ min: 0, max: 40_000 }), fc.integer({ min: 0, max: 4 * 3_600_000 })),
});
const historyArb = fc.record({
  nodes: fc.integer({ min: 1, max: 6 }),
  skyhooks: fc.array(incrementalSkyhookArb, { minLength: 1, maxLength: 3 }),
  clusterBudget: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  rounds: fc.array(incrementalRoundArb, { minLength: 5, maxLength: 30 }),
});
type History = typeof historyArb extends fc.Arbitrary<infer T> ? T : never;

function historyWorld(h: History): World {
  const skyhooks = h.skyhooks.map((s, i) => {
    const packages = Object.fromEntries(
      Object.entries(s.packages).map(([name, p], j) => [
        name,
        j === 0 && s.interrupt ? { ...p, interrupt: s.interrupt } : p,
      ]),
    );
    return scr(`s${i}`, {
      packages,
      interruptionBudget: s.budget,
      priority: s.priority,
      ...(s.sequencingAll ? { sequencing: 'all' as const } : {}),
      ...(s.barrier ? { podNonInterruptLabels: { matchLabels: KEEP } } : {}),
      ...(s.windowed ? { deploymentPolicy: 'windowed' } : {}),
      ...(s.group ? { nodeSelectors: { matchLabels: { [SELECTOR_LABEL]: 'yes', group: s.group } } } : {}),
    });
  });
  const w = world(
    skyhooks,
    Array.from({ length: h.nodes }, (_, i) => ({
      ...node(`n${i}`, i, { [SELECTOR_LABEL]: 'yes', group: i % 2 === 0 ? 'a' : 'b' }),
      pods: [],
    })),
  );
  w.copyOnWrite = true;
  w.now = Date.UTC(2026, 5, 1, 9, 0);
  w.policies = [
    policy('windowed', {
      default: { budget: { count: 2 }, strategy: { fixed: {} } },
      maintenanceWindows: [
        { days: ['mo', 'tu', 'we', 'th', 'fr', 'sa', 'su'], start: '10:00', end: '14:00', timeZone: 'UTC' },
      ],
    }),
  ];
  if (h.clusterBudget !== undefined) w.budgets = [budget('cluster', { maxDisrupted: { count: h.clusterBudget } })];
  return w;
}

const KEEP = { dontmess: 'withme' };

/** A change from outside the planner, made as an informer shows it: a new object. */
function applyChange(w: World, change: History['rounds'][number]['changes'][number]): void {
  if (change.kind === 'pause' || change.kind === 'bump') {
    const i = change.scr % w.skyhooks.length;
    const old = w.skyhooks[i]!;
    if (change.kind === 'pause') {
      const paused = old.metadata.annotations?.[SKYHOOK_ANNOTATIONS.pause] === 'true';
      const annotations = { ...old.metadata.annotations, [SKYHOOK_ANNOTATIONS.pause]: paused ? 'false' : 'true' };
      w.skyhooks[i] = { ...old, metadata: { ...old.metadata, annotations } };
    } else {
      const packages = Object.fromEntries(
        Object.entries(old.spec.packages ?? {}).map(([name, p]) => [
          name,
          { ...p, version: p.version === '1.0.0' ? '1.1.0' : '1.0.0', dependsOn: undefined },
        ]),
      );
      const generation = (old.metadata.generation ?? 1) + 1;
      w.skyhooks[i] = { ...old, metadata: { ...old.metadata, generation }, spec: { ...old.spec, packages } };
    }
  } else if (change.kind !== 'none') {
    const i = change.node % w.nodes.length;
    const old = w.nodes[i]!;
    const keeper = { namespace: 'default', name: 'train', labels: { ...KEEP }, phase: 'Running' };
    w.nodes[i] =
      change.kind === 'relabel'
        ? { ...old, labels: { ...old.labels, [SELECTOR_LABEL]: old.labels[SELECTOR_LABEL] ? 'no' : 'yes' } }
        : change.kind === 'taint'
          ? { ...old, taints: old.taints.length > 0 ? [] : [{ key: 'example.com/gpu', effect: 'NoSchedule' }] }
          : { ...old, pods: old.pods?.length ? [] : [keeper] };
  }
}

describe('incremental planning', () => {
  it('gives the same actions and requeue as planning from scratch, at every step of random histories', () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        const w = historyWorld(h);
        let cache: PlanCache | undefined = emptyPlanCache();
        for (const round of h.rounds) {
          for (const change of round.changes) applyChange(w, change);
          const input = {
            ...plannerInput(w),
            ...(round.only !== undefined ? { only: `s${round.only % w.skyhooks.length}` } : {}),
          };
          const full = planNextActions(input);
          const incremental = planNextActions({ ...input, cache });
          expect(incremental.actions).toEqual(full.actions);
          expect(incremental.requeueAfterMs).toEqual(full.requeueAfterMs);
          cache = incremental.cache;
          applyActions(w, full.actions.slice(0, Math.ceil(full.actions.length * round.applied)));
          settleRunningOps(w, round.outcomes);
          w.now += round.advanceMs;
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });
});

describe('plan cache', () => {
  it('is never changed by the run it is given to (the planner stays pure)', () => {
    fc.assert(
      fc.property(historyArb, (h) => {
        const w = historyWorld(h);
        let cache: PlanCache | undefined = emptyPlanCache();
        for (const round of h.rounds) {
          for (const change of round.changes) applyChange(w, change);
          const given = cache!;
          const before = [...given.skyhooks].map(([name, entry]) => ({
            name,
            entry,
            key: entry.key,
            nodes: [...entry.nodes].map(([node, value]) => ({ node, value, fields: { ...value } })),
          }));
          const result = planNextActions({ ...plannerInput(w), cache: given });
          const after = [...given.skyhooks].map(([name, entry]) => ({
            name,
            entry,
            key: entry.key,
            nodes: [...entry.nodes].map(([node, value]) => ({ node, value, fields: { ...value } })),
          }));
          expect(after.length).toBe(before.length);
          after.forEach((scr, i) => {
            expect(scr.entry).toBe(before[i]!.entry);
            expect(scr.nodes.length).toBe(before[i]!.nodes.length);
            scr.nodes.forEach((n, j) => {
              expect(n.value).toBe(before[i]!.nodes[j]!.value);
              for (const [field, value] of Object.entries(n.fields))
                expect(value).toBe((before[i]!.nodes[j]!.fields as Record<string, unknown>)[field]);
            });
          });
          cache = result.cache;
          applyActions(w, result.actions);
          w.ops = w.ops.map((op) => (op.phase === 'Running' ? { ...op, phase: 'Completed', finishedAt: w.now } : op));
          w.now += round.advanceMs;
        }
        return true;
      }),
      { numRuns: 50 },
    );
  });
});
