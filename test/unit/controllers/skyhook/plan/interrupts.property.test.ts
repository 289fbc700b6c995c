import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { DeploymentPolicySpec, Strategy } from '../../../../../src/api/deployment-policy.js';
import { nodeAnnotations } from '../../../../../src/api/names.js';
import type { Interrupt } from '../../../../../src/api/skyhook.js';
import { buildCompartments } from '../../../../../src/controllers/skyhook/plan/compartments.js';
import { packagesArb, playRounds } from './property-kit.js';
import { applyActions, node, pkg, plan, policy, scr, SELECTOR_LABEL, world, type World } from './world.js';

const interruptArb: fc.Arbitrary<Interrupt | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constant<Interrupt>({ type: 'reboot' }),
  fc.constant<Interrupt>({ type: 'noop' }),
  fc.constant<Interrupt>({ type: 'restartAllServices' }),
  fc.subarray(['containerd', 'cron', 'kubelet']).map((services): Interrupt => ({ type: 'service', services })),
);
/** Up to four root packages, each with or without an interrupt. */
const packages = packagesArb(4, interruptArb);
const budgetArb = fc.oneof(
  fc.record({ count: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ percent: fc.integer({ min: 1, max: 100 }) }),
);
const strategyArb: fc.Arbitrary<Strategy | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.record({ fixed: fc.record({ initialBatch: fc.integer({ min: 1, max: 3 }) }) }),
  fc.record({
    linear: fc.record({ initialBatch: fc.integer({ min: 1, max: 3 }), delta: fc.integer({ min: 1, max: 2 }) }),
  }),
  fc.record({
    exponential: fc.record({
      initialBatch: fc.integer({ min: 1, max: 2 }),
      growthFactor: fc.integer({ min: 2, max: 3 }),
    }),
  }),
);
const policyArb: fc.Arbitrary<DeploymentPolicySpec | undefined> = fc.oneof(
  fc.constant(undefined),
  fc
    .record({
      defaultBudget: budgetArb,
      defaultStrategy: strategyArb,
      zoneBudget: budgetArb,
      zoneStrategy: strategyArb,
    })
    .map(({ defaultBudget, defaultStrategy, zoneBudget, zoneStrategy }) => ({
      default: { budget: defaultBudget, strategy: defaultStrategy ?? { fixed: {} } },
      compartments: [
        {
          name: 'zone-a',
          selector: { matchLabels: { zone: 'a' } },
          budget: zoneBudget,
          ...(zoneStrategy ? { strategy: zoneStrategy } : {}),
        },
      ],
    })),
);
/** Per round, what each running op does: 0 keeps running, 1 completes, 2 fails. */
const scenarioArb = fc.record({
  nodes: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
  packages,
  policy: policyArb,
  legacyBudget: budgetArb,
  rounds: fc.array(fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 10 }), { minLength: 5, maxLength: 40 }),
  failures: fc.boolean(),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function setUp(s: Scenario): World {
  const nodes = s.nodes.map((inZone, i) =>
    node(`n${i}`, i, { [SELECTOR_LABEL]: 'yes', ...(inZone ? { zone: 'a' } : {}) }),
  );
  const skyhook = scr(
    's',
    s.policy
      ? { deploymentPolicy: 'p', packages: s.packages }
      : { interruptionBudget: s.legacyBudget, packages: s.packages },
  );
  const w = world([skyhook], nodes);
  if (s.policy) w.policies = [policy('p', s.policy)];
  return w;
}

describe('interrupt and rollout properties', () => {
  it('never has more nodes interrupted (cordoned by us) or in progress than each compartment allows', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const w = setUp(s);
        playRounds(s, w, () => {
          const compartments = buildCompartments(w.skyhooks[0]!.spec, s.policy, w.nodes);
          for (const compartment of compartments) {
            const atWork = compartment.nodes.filter((name) => {
              const n = w.nodes.find((candidate) => candidate.name === name)!;
              return (
                n.annotations[nodeAnnotations.cordon('s')] === 'true' ||
                w.ops.some((op) => op.node === name && (op.phase === 'Running' || op.phase === 'Pending'))
              );
            });
            expect(atWork.length).toBeLessThanOrEqual(compartment.ceiling);
          }
        });
        return true;
      }),
      { numRuns: 120 },
    );
  });

  it('interrupts a node once for the packages due together, and finishes every package', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const w = setUp({ ...s, failures: false });
        playRounds(
          { ...s, failures: false, rounds: [...s.rounds, ...Array.from({ length: 40 }, () => [])] },
          w,
          () => undefined,
        );
        const withInterrupt = Object.values(s.packages).some((p) => p.interrupt);
        for (const n of w.nodes) {
          const interrupts = w.creates.filter((c) => c.node === n.name && c.stage === 'interrupt');
          expect(interrupts.length).toBe(withInterrupt ? 1 : 0);
          expect(n.unschedulable ?? false).toBe(false);
        }
        expect(w.skyhooks[0]!.status?.status).toBe('complete');
        return true;
      }),
      { numRuns: 60 },
    );
  });

  it('never uncordons a node that another SCR or someone else holds', () => {
    fc.assert(
      fc.property(
        scenarioArb,
        fc.array(fc.constantFrom('none', 'other-scr', 'foreign'), { minLength: 6, maxLength: 6 }),
        (s, holders) => {
          const w = setUp(s);
          const held = new Set<string>();
          w.nodes.forEach((n, i) => {
            if (holders[i] === 'none') return;
            n.unschedulable = true;
            held.add(n.name);
            if (holders[i] === 'other-scr') n.annotations[nodeAnnotations.cordon('other')] = 'true';
          });
          playRounds(s, w, () => {
            for (const n of w.nodes) if (held.has(n.name)) expect(n.unschedulable).toBe(true);
          });
          return true;
        },
      ),
      { numRuns: 80 },
    );
  });

  it('batch sizes follow the strategy formulas (all batches succeed), capped by the ceiling and the nodes left', () => {
    const formulaArb = fc.record({
      kind: fc.constantFrom('fixed', 'linear', 'exponential'),
      initialBatch: fc.integer({ min: 1, max: 3 }),
      step: fc.integer({ min: 1, max: 3 }),
      nodes: fc.integer({ min: 1, max: 12 }),
      count: fc.integer({ min: 1, max: 12 }),
    });
    fc.assert(
      fc.property(formulaArb, ({ kind, initialBatch, step, nodes, count }) => {
        const strategy: Strategy =
          kind === 'fixed'
            ? { fixed: { initialBatch } }
            : kind === 'linear'
              ? { linear: { initialBatch, delta: step } }
              : { exponential: { initialBatch, growthFactor: step + 1 } };
        const w = world(
          [scr('s', { deploymentPolicy: 'p', packages: { a: pkg('1.0.0') } })],
          Array.from({ length: nodes }, (_, i) => node(`n${i}`, i)),
        );
        w.policies = [policy('p', { default: { budget: { count }, strategy }, resetBatchStateOnCompletion: false })];
        const sizes: number[] = [];
        let batch = 0;
        for (let round = 0; round < 60; round++) {
          const before = new Set(w.created.map((op) => op.node));
          applyActions(w, plan(w).actions);
          const fresh = new Set(w.created.map((op) => op.node).filter((n) => !before.has(n)));
          if (fresh.size > 0) sizes.push(fresh.size);
          w.ops = w.ops.map((op) => (op.phase === 'Running' ? { ...op, phase: 'Completed', finishedAt: w.now } : op));
          w.now += 1_000;
          batch = round;
        }
        const expected: number[] = [];
        let done = 0;
        let last = 0;
        while (done < nodes) {
          const raw =
            last === 0 || kind === 'fixed'
              ? initialBatch
              : kind === 'linear'
                ? last + step
                : Math.min(nodes, last * (step + 1));
          const size = Math.min(Math.max(1, Math.min(raw, nodes - done)), count);
          expected.push(size);
          done += size;
          last = size;
        }
        expect(batch).toBeGreaterThan(0);
        expect(sizes).toEqual(expected);
        return true;
      }),
      { numRuns: 80 },
    );
  });
});
