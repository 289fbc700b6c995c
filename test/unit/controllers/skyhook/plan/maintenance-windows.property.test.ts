import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { MaintenanceWindow } from '../../../../../src/api/maintenance-window.js';
import { nodeAnnotations } from '../../../../../src/api/names.js';
import { windowsOpen } from '../../../../../src/util/time-window.js';
import { budget } from '../../disruption/budgets.js';
import { packagesArb } from './property-kit.js';
import { applyActions, node, plan, policy, SELECTOR_LABEL, scr, settleRunningOps, world, type World } from './world.js';

const hhmm = (minutes: number): string =>
  `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
const windowArb: fc.Arbitrary<MaintenanceWindow> = fc.oneof(
  fc.record({
    days: fc.subarray(['mo', 'tu', 'we', 'th', 'fr', 'sa', 'su'], { minLength: 1 }),
    start: fc.integer({ min: 0, max: 1439 }).map(hhmm),
    end: fc.integer({ min: 0, max: 1439 }).map(hhmm),
    timeZone: fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York'),
  }),
  fc.record({
    schedule: fc
      .tuple(fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 23 }))
      .map(([m, h]) => `${m} ${h} * * *`),
    duration: fc.integer({ min: 10, max: 300 }).map((m) => `${m}m`),
  }),
);
const scenarioArb = fc.record({
  nodes: fc.array(fc.constantFrom('free', 'free', 'foreign', 'other-scr'), { minLength: 1, maxLength: 5 }),
  packages: packagesArb(3),
  windows: fc.array(windowArb, { minLength: 1, maxLength: 2 }),
  /** A DisruptionBudget's windows over the nodes of pool gpu (every other node), or none. */
  budgetWindows: fc.option(fc.array(windowArb, { minLength: 1, maxLength: 2 }), { nil: undefined }),
  start: fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2026, 11, 1) }),
  /** Per round: minutes that pass, and what each running op does (0 runs on, 1 completes, 2 fails). */
  rounds: fc.array(
    fc.record({
      minutes: fc.integer({ min: 1, max: 180 }),
      outcomes: fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 6 }),
    }),
    { minLength: 10, maxLength: 60 },
  ),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function setUp(s: Scenario): World {
  const nodes = s.nodes.map((holder, i) => {
    const n = node(`n${i}`, i, { [SELECTOR_LABEL]: 'yes', ...(i % 2 === 1 ? { pool: 'gpu' } : {}) });
    if (holder !== 'free') n.unschedulable = true;
    if (holder === 'other-scr') n.annotations[nodeAnnotations.cordon('other')] = 'true';
    return n;
  });
  const w = world([scr('s', { deploymentPolicy: 'p', packages: s.packages })], nodes);
  w.policies = [
    policy('p', { default: { budget: { count: 2 }, strategy: { fixed: {} } }, maintenanceWindows: s.windows }),
  ];
  if (s.budgetWindows)
    w.budgets = [
      budget('gpu', {
        nodeSelector: { matchLabels: { pool: 'gpu' } },
        maxDisrupted: { percent: 100 },
        maintenanceWindows: s.budgetWindows,
      }),
    ];
  w.now = s.start;
  return w;
}

/** The node may newly start an interrupt: the policy's windows and, on gpu nodes, the budget's are open. */
function openFor(s: Scenario, w: World, nodeName: string): boolean {
  const at = new Date(w.now);
  const gpu = w.nodes.find((n) => n.name === nodeName)?.labels['pool'] === 'gpu';
  return windowsOpen(s.windows, at) && (!gpu || s.budgetWindows === undefined || windowsOpen(s.budgetWindows, at));
}

const CLAIM = nodeAnnotations.cordon('s');

describe('maintenance window properties', () => {
  it('never starts an interrupt outside a window (a node already interrupted may go on)', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const w = setUp(s);
        const interrupted = new Set<string>();
        for (const round of s.rounds) {
          const claimed = new Set(w.nodes.filter((n) => Object.hasOwn(n.annotations, CLAIM)).map((n) => n.name));
          const { actions } = plan(w);
          for (const action of actions) {
            // A new cordon for this SCR's interrupts, or joining another's, starts an interrupt.
            if (action.kind === 'cordonNode' && action.claim === CLAIM && !claimed.has(action.node))
              expect({ cordon: action.node, open: openFor(s, w, action.node) }).toEqual({
                cordon: action.node,
                open: true,
              });
            // A stage of the interrupt flow (cordoned: drain, apply, config, interrupt, post-interrupt).
            if (action.kind === 'createStageOp' && (action.cordon === true || action.stage === 'interrupt')) {
              const started = claimed.has(action.node) || interrupted.has(action.node);
              const open = openFor(s, w, action.node) || started;
              expect({ stage: action.node, open }).toEqual({ stage: action.node, open: true });
              interrupted.add(action.node);
            }
          }
          applyActions(w, actions);
          settleRunningOps(w, round.outcomes);
          w.now += round.minutes * 60_000;
        }
        return true;
      }),
      { numRuns: 100 },
    );
  });

  it('finishes every node once windows have come round, and no longer shows a next window', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        // Without the budget: two sources' windows need not ever overlap.
        const w = setUp({ ...s, nodes: s.nodes.map(() => 'free'), budgetWindows: undefined });
        // Every op completes within a second; when nothing runs the clock jumps to the planner's
        // requested wake-up, as the controller's timer would (a window may be open one second only).
        for (let round = 0; round < 2000 && w.skyhooks[0]!.status?.status !== 'complete'; round++) {
          const result = plan(w);
          applyActions(w, result.actions);
          const running = w.ops.some((op) => op.phase === 'Running');
          w.ops = w.ops.map((op) => (op.phase === 'Running' ? { ...op, phase: 'Completed', finishedAt: w.now } : op));
          w.now += running ? 1000 : Math.max(1000, result.requeueAfterMs ?? 60_000);
        }
        applyActions(w, plan(w).actions);
        expect(w.skyhooks[0]!.status?.status).toBe('complete');
        expect(w.skyhooks[0]!.status?.nextMaintenanceWindow).toBeUndefined();
        expect(w.nodes.every((n) => !n.unschedulable)).toBe(true);
        return true;
      }),
      { numRuns: 40 },
    );
  });
});
