/**
 * The cluster-wide DisruptionBudgets in the planner, across random states: two SCRs with random
 * interrupts, per-SCR budgets (legacy or a DeploymentPolicy), one or two cluster budgets over all
 * nodes or a zone, and nodes a NodeOp holds. After every pass no budget has more nodes disrupted
 * than it allows (unless the NodeOps alone already disrupt more), no SCR has more nodes at work than
 * its own compartments allow, and without failures every SCR completes.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { DeploymentPolicySpec } from '../../../../../src/api/deployment-policy.js';
import type { DisruptionBudgetSpec } from '../../../../../src/api/disruption-budget.js';
import { NODEOP_NAMES, nodeAnnotations } from '../../../../../src/api/names.js';
import { DisruptionLedger } from '../../../../../src/controllers/disruption/budget-rules.js';
import { buildCompartments } from '../../../../../src/controllers/skyhook/plan/compartments.js';
import { budget } from '../../disruption/budgets.js';
import { packagesArb, playRounds } from './property-kit.js';
import { node, policy, scr, SELECTOR_LABEL, world, type World } from './world.js';

const packages = packagesArb(3);
const countOrPercent = fc.oneof(
  fc.record({ count: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ percent: fc.integer({ min: 1, max: 100 }) }),
);
const policyArb: fc.Arbitrary<DeploymentPolicySpec | undefined> = fc.option(
  fc.record({ budget: countOrPercent, zone: countOrPercent }).map(({ budget: b, zone }) => ({
    default: { budget: b, strategy: { fixed: {} } },
    compartments: [{ name: 'zone-a', selector: { matchLabels: { zone: 'a' } }, budget: zone }],
  })),
  { nil: undefined },
);
const skyhookArb = fc.record({ packages, legacyBudget: countOrPercent, policy: policyArb });
const clusterBudgetArb: fc.Arbitrary<DisruptionBudgetSpec> = fc
  .record({ zoneOnly: fc.boolean(), max: countOrPercent })
  .map(({ zoneOnly, max }) => ({
    ...(zoneOnly ? { nodeSelector: { matchLabels: { zone: 'a' } } } : {}),
    maxDisrupted: max,
  }));
/** Per round, what each running op does: 0 keeps running, 1 completes, 2 fails. */
const scenarioArb = fc.record({
  nodes: fc.array(fc.record({ inZone: fc.boolean(), heldByNodeOp: fc.boolean() }), { minLength: 1, maxLength: 6 }),
  skyhooks: fc.array(skyhookArb, { minLength: 1, maxLength: 2 }),
  budgets: fc.array(clusterBudgetArb, { minLength: 1, maxLength: 2 }),
  rounds: fc.array(fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 10 }), { minLength: 5, maxLength: 40 }),
  failures: fc.boolean(),
  nodeOps: fc.boolean(),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

const SCR_NAMES = ['first', 'second'];

function setUp(s: Scenario): World {
  const nodes = s.nodes.map(({ inZone, heldByNodeOp }, i) => {
    const n = node(`n${i}`, i, { [SELECTOR_LABEL]: 'yes', ...(inZone ? { zone: 'a' } : {}) });
    if (s.nodeOps && heldByNodeOp) {
      n.unschedulable = true;
      n.annotations[NODEOP_NAMES.cordonedBy] = `default/op-${i}@uid`;
    }
    return n;
  });
  const skyhooks = s.skyhooks.map((spec, i) =>
    scr(
      SCR_NAMES[i]!,
      spec.policy
        ? { deploymentPolicy: `p${i}`, packages: spec.packages }
        : { interruptionBudget: spec.legacyBudget, packages: spec.packages },
    ),
  );
  const w = world(skyhooks, nodes);
  w.policies = s.skyhooks.flatMap((spec, i) => (spec.policy ? [policy(`p${i}`, spec.policy)] : []));
  w.budgets = s.budgets.map((spec, i) => budget(`cluster-${i}`, spec));
  return w;
}

describe('cluster-wide disruption budget properties', () => {
  it('never has more nodes disrupted than the strictest of the SCR budget, the policy budget and the cluster budget', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const w = setUp(s);
        const initially = new DisruptionLedger(w.budgets!, w.nodes).usage().map((u) => u.disrupted.size);
        playRounds(s, w, () => {
          // Every cluster budget: at most its limit (or what NodeOps alone held before any SCR ran).
          new DisruptionLedger(w.budgets!, w.nodes).usage().forEach((usage, i) => {
            expect(usage.disrupted.size).toBeLessThanOrEqual(Math.max(usage.limit, initially[i]!));
          });
          // Every SCR: at most each of its compartments' ceilings (legacy budget or policy).
          for (const [i, skyhook] of w.skyhooks.entries()) {
            for (const compartment of buildCompartments(skyhook.spec, s.skyhooks[i]!.policy, w.nodes)) {
              const atWork = compartment.nodes.filter((name) => {
                const n = w.nodes.find((candidate) => candidate.name === name)!;
                return (
                  n.annotations[nodeAnnotations.cordon(skyhook.metadata.name!)] === 'true' ||
                  w.ops.some(
                    (op) =>
                      op.skyhook === skyhook.metadata.name &&
                      op.node === name &&
                      (op.phase === 'Running' || op.phase === 'Pending'),
                  )
                );
              });
              expect(atWork.length).toBeLessThanOrEqual(compartment.ceiling);
            }
          }
        });
        return true;
      }),
      { numRuns: 150 },
    );
  });

  it('lets every SCR complete under the cluster budgets, each node interrupted once and uncordoned', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const settled = {
          ...s,
          failures: false,
          nodeOps: false,
          rounds: [...s.rounds, ...Array.from({ length: 80 }, () => [])],
        };
        const w = setUp(settled);
        playRounds(settled, w, () => undefined);
        for (const [i, skyhook] of w.skyhooks.entries()) {
          const withInterrupt = Object.values(s.skyhooks[i]!.packages).some((p) => p.interrupt);
          for (const n of w.nodes) {
            const interrupts = w.creates.filter(
              (c) => c.skyhook === skyhook.metadata.name && c.node === n.name && c.stage === 'interrupt',
            );
            expect(interrupts.length).toBe(withInterrupt ? 1 : 0);
          }
          expect(skyhook.status?.status).toBe('complete');
        }
        for (const n of w.nodes) expect(n.unschedulable ?? false).toBe(false);
        return true;
      }),
      { numRuns: 80 },
    );
  });
});
