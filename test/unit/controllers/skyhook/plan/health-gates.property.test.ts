/**
 * Health gates across random rollouts (reboot packages, a fixed strategy, random gate results each
 * pass, plans cut short by crashes): a node's cordon is only released in a pass whose input says its
 * beforeUncordon gate passed; the nodes this SCR holds cordoned never exceed the budget; and a new
 * batch never starts while a node of the previous one still waits on a gate within its timeout.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { gateKey, type HealthGateResults } from '../../../../../src/api/health-gates.js';
import { nodeAnnotations } from '../../../../../src/api/names.js';
import { planNextActions } from '../../../../../src/controllers/skyhook/plan/planner.js';
import { applyActions, node, pkg, plannerInput, policy, scr, world, type World } from './world.js';

const roundArb = fc.record({
  /** Per node: does its beforeUncordon gate pass, does its beforeBatch gate pass. */
  gates: fc.array(fc.tuple(fc.boolean(), fc.boolean()), { minLength: 5, maxLength: 5 }),
  finish: fc.boolean(),
  applied: fc.double({ min: 0, max: 1, noNaN: true }),
  advanceMs: fc.constantFrom(1_000, 20_000, 70_000),
});

const scenarioArb = fc.record({
  nodes: fc.integer({ min: 1, max: 5 }),
  count: fc.integer({ min: 1, max: 3 }),
  initialBatch: fc.integer({ min: 1, max: 3 }),
  reboot: fc.boolean(),
  crashes: fc.boolean(),
  rounds: fc.array(roundArb, { minLength: 10, maxLength: 50 }),
});

const CLAIM = nodeAnnotations.cordon('s');
const STATUS = nodeAnnotations.status('s');
const GATE = nodeAnnotations.healthGate('s');

function setUp(s: { nodes: number; count: number; initialBatch: number; reboot: boolean }): World {
  const w = world(
    [
      scr('s', {
        deploymentPolicy: 'p',
        packages: { a: pkg('1.0.0', s.reboot ? { interrupt: { type: 'reboot' } } : {}) },
      }),
    ],
    Array.from({ length: s.nodes }, (_, i) => node(`n${i}`, i)),
  );
  w.policies = [
    policy('p', {
      default: { budget: { count: s.count }, strategy: { fixed: { initialBatch: s.initialBatch } } },
      healthGates: {
        beforeUncordon: [{ name: 'u', timeout: '1m', cel: 'true' }],
        beforeBatch: [{ name: 'b', timeout: '1m', cel: 'true' }],
      },
    }),
  ];
  return w;
}

describe('health gates, across random rollouts', () => {
  it('release only past beforeUncordon, cordons within the budget, no new batch while a gate waits in time', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const w = setUp(s);
        for (const round of s.rounds) {
          const results: HealthGateResults['results'] = { p: {} };
          w.nodes.forEach((n, i) => {
            const [uncordon, batch] = round.gates[i]!;
            results['p']![n.name] = {
              [gateKey('beforeUncordon', 'u')]: { passed: uncordon, ...(uncordon ? {} : { detail: 'no' }) },
              [gateKey('beforeBatch', 'b')]: { passed: batch, ...(batch ? {} : { detail: 'no' }) },
            };
          });
          const { actions } = planNextActions({ ...plannerInput(w), healthGates: { problems: {}, results } });
          const before = new Map(w.nodes.map((n) => [n.name, { ...n.annotations }]));
          const gate = (name: string, point: 0 | 1): boolean => round.gates[Number(name.slice(1))]![point];
          for (const action of actions) {
            if (action.kind === 'releaseNodeCordon') expect(gate(action.node, 0)).toBe(true);
          }
          // A node newly taking a slot while another waits, in time, on a gate that fails now: a new batch too early.
          const newlyAdmitted = actions.some(
            (a) =>
              a.kind === 'setNodeStatus' &&
              a.status === 'in_progress' &&
              !['in_progress', 'erroring'].includes(before.get(a.node)?.[STATUS] ?? ''),
          );
          if (newlyAdmitted) {
            for (const [name, annotations] of before) {
              if (annotations[GATE] === undefined || annotations[STATUS] !== 'in_progress') continue;
              const { point, since } = JSON.parse(annotations[GATE]) as { point: string; since: string };
              const inTime = w.now - Date.parse(since) < 60_000;
              const failing = !gate(name, point === 'beforeUncordon' ? 0 : 1);
              expect(inTime && failing).toBe(false);
            }
          }
          applyActions(w, s.crashes ? actions.slice(0, Math.floor(actions.length * round.applied)) : actions);
          expect(w.nodes.filter((n) => n.annotations[CLAIM] !== undefined).length).toBeLessThanOrEqual(s.count);
          if (round.finish)
            w.ops = w.ops.map((op) => (op.phase === 'Running' ? { ...op, phase: 'Completed', finishedAt: w.now } : op));
          w.now += round.advanceMs;
        }
        return true;
      }),
      { numRuns: 200 },
    );
  });
});
