import { describe, expect, it } from '@jest/globals';
import type { MaintenanceWindow } from '../../../../../src/api/maintenance-window.js';
import { nodeAnnotations, SKYHOOK_CONDITIONS } from '../../../../../src/api/names.js';
import {
  MAX_WINDOW_REQUEUE_MS,
  windowVerdict,
} from '../../../../../src/controllers/skyhook/plan/maintenance-windows.js';
import type { Package } from '../../../../../src/api/skyhook.js';
import type { PlannerAction } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { budget } from '../../disruption/budgets.js';
import {
  applyActions,
  node,
  nodeNamed,
  pkg,
  plan,
  policy,
  runToQuiet,
  SELECTOR_LABEL,
  scr,
  world,
  type World,
} from './world.js';

// Tuesday 2026-11-24 10:00 UTC; the window opens at 12:00.
const TEN = Date.UTC(2026, 10, 24, 10, 0, 0);
const NOON = Date.UTC(2026, 10, 24, 12, 0, 0);
const LUNCH: MaintenanceWindow[] = [{ start: '12:00', end: '13:00' }];
const reboot = { interrupt: { type: 'reboot' as const } };

function windowed(packages: Record<string, Package>, windows = LUNCH, nodes = 2): World {
  const w = world(
    [scr('s', { deploymentPolicy: 'p', packages })],
    Array.from({ length: nodes }, (_, i) => node(`n${i}`, i)),
  );
  w.policies = [
    policy('p', {
      default: { budget: { count: 2 }, strategy: { fixed: { initialBatch: 2 } } },
      maintenanceWindows: windows,
    }),
  ];
  w.now = TEN;
  return w;
}

const cordons = (actions: PlannerAction[]) => actions.filter((a) => a.kind === 'cordonNode');
const creates = (actions: PlannerAction[]) => actions.filter((a) => a.kind === 'createStageOp');

describe('maintenance windows (DeploymentPolicy.spec.maintenanceWindows)', () => {
  it('starts no interrupt outside the windows, shows the wait, and asks to be woken at the opening', () => {
    const w = windowed({ r: pkg('1.0.0', reboot) });
    const result = plan(w);
    expect(cordons(result.actions)).toEqual([]);
    expect(creates(result.actions)).toEqual([]);
    expect(result.requeueAfterMs).toBe(NOON - TEN);
    applyActions(w, result.actions);
    const waiting = nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('s')];
    expect(waiting).toBe(
      'OutsideMaintenanceWindow: interrupts wait for a maintenance window (DeploymentPolicy "p": 12:00-13:00 UTC); next opens 2026-11-24T12:00:00Z',
    );
    const status = w.skyhooks[0]!.status!;
    expect(status.nextMaintenanceWindow).toBe('2026-11-24T12:00:00Z');
    expect(status.conditions?.find((c) => c.type === SKYHOOK_CONDITIONS.maintenanceWindow)).toMatchObject({
      status: 'True',
      reason: 'OutsideMaintenanceWindow',
      message: expect.stringMatching(/^2 node\(s\) wait: interrupts wait for a maintenance window/),
    });
    const events = result.actions.filter((a) => a.kind === 'event' && a.reason === 'OutsideMaintenanceWindow');
    expect(events.map((e) => (e.kind === 'event' ? e.involved.name : ''))).toEqual(['n0', 'n1']);
    // A second pass while closed: nothing new, no repeated Events.
    const again = plan(w);
    expect(again.actions.filter((a) => a.kind === 'event')).toEqual([]);
    expect(again.requeueAfterMs).toBe(NOON - TEN);
  });

  it('proceeds at the opening and clears the wait', () => {
    const w = windowed({ r: pkg('1.0.0', reboot) });
    applyActions(w, plan(w).actions);
    w.now = NOON;
    const open = plan(w);
    expect(cordons(open.actions).map((a) => a.node)).toEqual(['n0', 'n1']);
    runToQuiet(w);
    expect(w.skyhooks[0]!.status?.status).toBe('complete');
    expect(w.skyhooks[0]!.status?.nextMaintenanceWindow).toBeUndefined();
    expect(w.skyhooks[0]!.status?.conditions?.some((c) => c.type === SKYHOOK_CONDITIONS.maintenanceWindow)).toBe(false);
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('s')]).toBeUndefined();
  });

  it('lets stages without an interrupt go on while closed', () => {
    const w = windowed({ calm: pkg('1.0.0'), r: pkg('1.0.0', reboot) });
    runToQuiet(w, 20);
    expect(w.now).toBeLessThan(NOON);
    const calmStages = w.creates.filter((c) => c.package.name === 'calm').map((c) => `${c.node} ${c.stage}`);
    expect(calmStages.sort()).toEqual(['n0 apply', 'n0 config', 'n1 apply', 'n1 config']);
    expect(w.creates.some((c) => c.package.name === 'r')).toBe(false);
    expect(w.nodes.some((n) => n.unschedulable)).toBe(false);
  });

  it('an SCR without interrupts completes while closed', () => {
    const w = windowed({ calm: pkg('1.0.0') });
    runToQuiet(w, 20);
    expect(w.skyhooks[0]!.status?.status).toBe('complete');
    expect(w.skyhooks[0]!.status?.nextMaintenanceWindow).toBeUndefined();
  });

  it('lets a node already interrupted (holding this SCR cordon) finish after the window closes', () => {
    const w = windowed({ r: pkg('1.0.0', reboot) }, LUNCH, 1);
    w.now = NOON;
    // Cordon, then apply and config run; the window closes before the interrupt.
    for (let round = 0; round < 3; round++) {
      applyActions(w, plan(w).actions);
      w.ops = w.ops.map((op) => (op.phase === 'Running' ? { ...op, phase: 'Completed', finishedAt: w.now } : op));
    }
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.cordon('s')]).toBe('true');
    w.now = Date.UTC(2026, 10, 24, 14, 0, 0);
    runToQuiet(w, 20);
    expect(w.creates.filter((c) => c.stage === 'interrupt').map((c) => c.node)).toEqual(['n0']);
    expect(w.skyhooks[0]!.status?.status).toBe('complete');
    expect(nodeNamed(w, 'n0').unschedulable ?? false).toBe(false);
  });

  it('never opens through an invalid window, says why, and rechecks twice a day at most', () => {
    const w = windowed({ r: pkg('1.0.0', reboot) }, [{ start: '12:00', end: '13:00', timeZone: 'Mars/Olympus' }]);
    const result = plan(w);
    expect(creates(result.actions)).toEqual([]);
    expect(result.requeueAfterMs).toBe(MAX_WINDOW_REQUEUE_MS);
    applyActions(w, result.actions);
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('s')]).toMatch(
      /maintenanceWindows\[0\] is invalid: timeZone: unknown time zone "Mars\/Olympus".*no window opens in the next two weeks$/,
    );
    expect(w.skyhooks[0]!.status?.nextMaintenanceWindow).toBeUndefined();
  });

  it('caps the wake-up of a far opening (a timer past 2^31 ms would fire at once)', () => {
    const w = windowed({ r: pkg('1.0.0', reboot) }, [{ schedule: '0 2 1 * *', duration: '4h' }]);
    w.now = Date.UTC(2026, 10, 2, 10, 0, 0);
    expect(plan(w).requeueAfterMs).toBe(MAX_WINDOW_REQUEUE_MS);
  });
});

describe('maintenance windows of DisruptionBudgets', () => {
  it('hold the nodes a budget with closed windows covers, for a Skyhook without a policy', () => {
    const w = world(
      [scr('s', { packages: { r: pkg('1.0.0', reboot) }, interruptionBudget: { count: 2 } })],
      [node('n0', 0), node('n1', 1, { [SELECTOR_LABEL]: 'yes', pool: 'gpu' })],
    );
    w.now = TEN;
    w.budgets = [
      budget('gpu-nights', {
        nodeSelector: { matchLabels: { pool: 'gpu' } },
        maxDisrupted: { count: 5 },
        maintenanceWindows: LUNCH,
      }),
    ];
    const result = plan(w);
    expect(cordons(result.actions).map((a) => a.node)).toEqual(['n0']);
    expect(result.requeueAfterMs).toBe(NOON - TEN);
    applyActions(w, result.actions);
    expect(nodeNamed(w, 'n1').annotations[nodeAnnotations.waiting('s')]).toBe(
      'OutsideMaintenanceWindow: interrupts wait for a maintenance window (DisruptionBudget "gpu-nights": 12:00-13:00 UTC); next opens 2026-11-24T12:00:00Z',
    );
    expect(w.skyhooks[0]!.status?.nextMaintenanceWindow).toBe('2026-11-24T12:00:00Z');
  });

  it('need both the policy and the budget open, and wait for the first time both are', () => {
    const w = windowed({ r: pkg('1.0.0', reboot) }, [{ start: '11:00', end: '14:00' }], 1);
    w.budgets = [budget('all', { maxDisrupted: { count: 5 }, maintenanceWindows: [{ start: '13:30', end: '18:00' }] })];
    w.now = Date.UTC(2026, 10, 24, 11, 30);
    const result = plan(w);
    expect(cordons(result.actions)).toEqual([]);
    expect(result.requeueAfterMs).toBe(Date.UTC(2026, 10, 24, 13, 30) - w.now);
    applyActions(w, result.actions);
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('s')]).toContain(
      '(DeploymentPolicy "p": 11:00-14:00 UTC; DisruptionBudget "all": 13:30-18:00 UTC); next opens 2026-11-24T13:30:00Z',
    );
    w.now = Date.UTC(2026, 10, 24, 13, 30);
    expect(cordons(plan(w).actions).map((a) => a.node)).toEqual(['n0']);
  });
});

describe('windowVerdict', () => {
  it('needs every source open and finds when they are open together', () => {
    const sources = [
      { kind: 'DeploymentPolicy' as const, name: 'p', windows: [{ start: '10:00', end: '14:00' }] },
      { kind: 'DisruptionBudget' as const, name: 'b', windows: [{ start: '13:00', end: '18:00' }] },
    ];
    expect(windowVerdict(sources, Date.UTC(2026, 10, 24, 13, 30))).toEqual({ open: true });
    const verdict = windowVerdict(sources, Date.UTC(2026, 10, 24, 11, 0));
    expect(verdict).toMatchObject({ open: false, nextOpen: Date.UTC(2026, 10, 24, 13, 0) });
    const late = windowVerdict(sources, Date.UTC(2026, 10, 24, 16, 0));
    expect(late).toMatchObject({ open: false, nextOpen: Date.UTC(2026, 10, 25, 13, 0) });
    expect(windowVerdict([{ ...sources[0]!, windows: [] }], 0)).toEqual({ open: true });
  });
});
