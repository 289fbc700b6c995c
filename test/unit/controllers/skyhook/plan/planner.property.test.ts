import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Package } from '../../../../../src/api/skyhook.js';
import { budgetCeiling } from '../../../../../src/controllers/skyhook/plan/rollout.js';
import type { CreateStageOp, PlannerAction } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { applyActions, node, pkg, plan, scr, world, type World } from './world.js';

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
