/**
 * Health gates in the planner: the pure decision of one node (health-gate-plan.ts) and whole
 * rollouts in the test world with gate results given as input: the next batch waits on the gates of
 * the nodes just finished, an interrupted node stays cordoned until its beforeUncordon gates pass and
 * is erroring with the gate's reason when one times out, and the wait's start survives a restart.
 */
import { describe, expect, it } from '@jest/globals';
import type { DeploymentPolicySpec } from '../../../../../src/api/deployment-policy.js';
import { gateKey, type HealthGateResults, type HealthGates } from '../../../../../src/api/health-gates.js';
import { nodeAnnotations, nodeConditionTypes } from '../../../../../src/api/names.js';
import { decideGates, readGateState } from '../../../../../src/controllers/skyhook/plan/health-gate-plan.js';
import { planNextActions } from '../../../../../src/controllers/skyhook/plan/planner.js';
import type {
  NodeView,
  PlannerAction,
  SetNodeStatus,
} from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import {
  applyActions,
  finishOps,
  node,
  nodeNamed,
  pkg,
  plannerInput,
  policy,
  scr,
  world,
  type World,
} from './world.js';

const GATES: HealthGates = {
  beforeBatch: [{ name: 'settled', timeout: '1m', nodeConditions: [{ type: 'Settled', status: 'True' }] }],
  beforeUncordon: [{ name: 'validated', timeout: '2m', cel: 'true' }],
};
const NOW = 10_000_000;
const view = (annotations: Record<string, string> = {}): NodeView => ({ ...node('n0'), annotations });
const claim = nodeAnnotations.cordon('s');
const gateAnnotation = nodeAnnotations.healthGate('s');

describe('decideGates (one node whose packages are done)', () => {
  const base = {
    skyhook: 's',
    gates: GATES,
    node: view(),
    recordStatus: 'in_progress' as const,
    holdsClaim: false,
    now: NOW,
  };

  it('without gates the node is complete and its cordon may go', () => {
    expect(decideGates({ ...base, gates: undefined, results: undefined })).toEqual({
      status: 'complete',
      release: true,
    });
  });

  it('a failing beforeBatch gate keeps the node in progress (uncordoned), records the start, and asks to look again at its timeout', () => {
    const decision = decideGates({
      ...base,
      results: {
        [gateKey('beforeBatch', 'settled')]: { passed: false, detail: 'condition Settled is absent, want True' },
      },
    });
    expect(decision.status).toBe('in_progress');
    expect(decision.release).toBe(true);
    expect(decision.hold?.reason).toBe('HealthGate');
    expect(decision.hold?.detail).toContain('beforeBatch gate settled: condition Settled is absent, want True');
    expect(JSON.parse(decision.annotation!)).toEqual({ point: 'beforeBatch', since: new Date(NOW).toISOString() });
    expect(decision.requeueAfterMs).toBe(60_000);
  });

  it('a result not there yet counts as not passed', () => {
    const decision = decideGates({ ...base, results: undefined });
    expect(decision.hold?.detail).toContain('not checked yet');
  });

  it('counts the timeout from the persisted start (a restart does not reset it) and then is erroring with the gate reason', () => {
    const since = new Date(NOW - 61_000).toISOString();
    const waiting = decideGates({
      ...base,
      node: view({ [gateAnnotation]: JSON.stringify({ point: 'beforeBatch', since }) }),
      results: { [gateKey('beforeBatch', 'settled')]: { passed: false, detail: 'condition Settled is False' } },
    });
    expect(waiting.status).toBe('erroring');
    expect(waiting.annotation).toBeUndefined();
    expect(waiting.hold).toEqual({
      reason: 'HealthGateTimedOut',
      detail: 'beforeBatch gate settled did not pass within 1m: condition Settled is False',
    });
    expect(waiting.failure).toBe(waiting.hold?.detail);
    expect(waiting.requeueAfterMs).toBeUndefined();
  });

  it('an interrupted node waits on beforeUncordon with its cordon kept, then moves on to beforeBatch with a new start', () => {
    const holding = decideGates({ ...base, holdsClaim: true, results: {} });
    expect(holding).toMatchObject({ status: 'in_progress', release: false });
    expect(JSON.parse(holding.annotation!).point).toBe('beforeUncordon');
    const old = JSON.stringify({ point: 'beforeUncordon', since: new Date(NOW - 500_000).toISOString() });
    const next = decideGates({
      ...base,
      holdsClaim: true,
      node: view({ [gateAnnotation]: old }),
      results: { [gateKey('beforeUncordon', 'validated')]: { passed: true } },
    });
    expect(next).toMatchObject({ status: 'in_progress', release: true });
    expect(JSON.parse(next.annotation!)).toEqual({ point: 'beforeBatch', since: new Date(NOW).toISOString() });
  });

  it('a node already complete is not gated again; a passed node drops its annotation', () => {
    expect(decideGates({ ...base, recordStatus: 'complete', results: {} })).toEqual({
      status: 'complete',
      release: true,
    });
    const passed = decideGates({
      ...base,
      node: view({ [gateAnnotation]: JSON.stringify({ point: 'beforeBatch', since: new Date(NOW).toISOString() }) }),
      results: { [gateKey('beforeBatch', 'settled')]: { passed: true } },
    });
    expect(passed).toEqual({ status: 'complete', release: true, annotation: null });
  });

  it('reads only well-formed annotations', () => {
    expect(readGateState(view({ [gateAnnotation]: 'garbage' }), 's')).toBeUndefined();
    expect(
      readGateState(view({ [gateAnnotation]: '{"point":"x","since":"2030-01-01T00:00:00Z"}' }), 's'),
    ).toBeUndefined();
    expect(
      readGateState(view({ [gateAnnotation]: '{"point":"beforeBatch","since":"2030-01-01T00:00:00Z"}' }), 's'),
    ).toEqual({
      point: 'beforeBatch',
      since: Date.parse('2030-01-01T00:00:00Z'),
    });
  });
});

/** Plans with the given gate results (as the reconciler passes them) and applies the actions. */
function step(
  w: World,
  results: HealthGateResults['results'] = {},
  problems: HealthGateResults['problems'] = {},
): PlannerAction[] {
  const { actions } = planNextActions({ ...plannerInput(w), healthGates: { problems, results } });
  applyActions(w, actions);
  return actions;
}

const statusOf = (w: World, name: string): string | undefined =>
  nodeNamed(w, name).annotations[nodeAnnotations.status('s')];
const waitingOf = (w: World, name: string): string | undefined =>
  nodeNamed(w, name).annotations[nodeAnnotations.waiting('s')];

function gatedWorld(spec: Partial<DeploymentPolicySpec>, interrupt = false): World {
  const w = world(
    [
      scr('s', {
        deploymentPolicy: 'p',
        packages: { a: pkg('1.0.0', interrupt ? { interrupt: { type: 'reboot' } } : {}) },
      }),
    ],
    [node('n0', 0), node('n1', 1)],
  );
  w.policies = [policy('p', { default: { budget: { count: 1 }, strategy: { fixed: { initialBatch: 1 } } }, ...spec })];
  return w;
}

/** Runs passes (finishing ops each time) until `until` holds, at most `rounds`. */
function runUntil(w: World, results: () => HealthGateResults['results'], until: () => boolean, rounds = 40): void {
  for (let round = 0; round < rounds && !until(); round++) {
    step(w, results());
    finishOps(w);
    w.now += 1_000;
  }
  expect(until()).toBe(true);
}

describe('beforeBatch gates in a rollout', () => {
  it('the next batch waits, visibly, until the gates pass on the nodes just finished', () => {
    const w = gatedWorld({ healthGates: { beforeBatch: GATES.beforeBatch! } });
    let settled = false;
    const results = () => ({
      p: {
        n0: {
          [gateKey('beforeBatch', 'settled')]: settled
            ? { passed: true }
            : { passed: false, detail: 'condition Settled is absent, want True' },
        },
      },
    });
    let started = false;
    for (let round = 0; round < 40 && waitingOf(w, 'n0')?.startsWith('HealthGate:') !== true; round++) {
      const actions = step(w, results());
      started ||= actions.some((a) => a.kind === 'event' && a.reason === 'HealthGate' && a.involved.name === 'n0');
      finishOps(w);
      w.now += 1_000;
    }
    expect(started).toBe(true);
    // n0's packages are done, its gate fails: it keeps the batch, n1 does not start.
    for (let i = 0; i < 5; i++) {
      const actions = step(w, results());
      expect(actions.some((a) => a.kind === 'createStageOp' && a.node === 'n1')).toBe(false);
      w.now += 5_000;
    }
    expect(statusOf(w, 'n0')).toBe('in_progress');
    expect(statusOf(w, 'n1')).not.toBe('in_progress');
    expect(nodeNamed(w, 'n0').annotations[gateAnnotation]).toBeDefined();
    settled = true;
    runUntil(w, results, () => statusOf(w, 'n1') === 'in_progress');
    expect(statusOf(w, 'n0')).toBe('complete');
    expect(nodeNamed(w, 'n0').annotations[gateAnnotation]).toBeUndefined();
    expect(waitingOf(w, 'n0')).toBeUndefined();
  });

  it('a gate that times out makes the node erroring with its reason and the strategy judges the batch failed', () => {
    const w = gatedWorld({ healthGates: { beforeBatch: GATES.beforeBatch! } });
    const results = () => ({
      p: { n0: { [gateKey('beforeBatch', 'settled')]: { passed: false, detail: 'condition Settled is False' } } },
    });
    runUntil(w, results, () => waitingOf(w, 'n0')?.startsWith('HealthGate:') === true);
    w.now += 61_000;
    const actions = step(w, results());
    expect(statusOf(w, 'n0')).toBe('erroring');
    expect(waitingOf(w, 'n0')).toBe(
      'HealthGateTimedOut: beforeBatch gate settled did not pass within 1m: condition Settled is False',
    );
    const status = actions.find((a): a is SetNodeStatus => a.kind === 'setNodeStatus' && a.node === 'n0');
    expect(status?.conditions.find((c) => c.type === nodeConditionTypes.erroring('s'))).toMatchObject({
      status: 'True',
      reason: 'HealthGateFailed',
    });
    expect(actions.some((a) => a.kind === 'event' && a.reason === 'HealthGateTimedOut')).toBe(true);
    // Failed, the node leaves the batch: the next one starts (no failureThreshold stops the rollout).
    runUntil(w, results, () => statusOf(w, 'n1') === 'in_progress');
    expect(statusOf(w, 'n0')).toBe('erroring');
  });
});

describe('beforeBatch gates without a strategy (a compartment that is a sliding window)', () => {
  it('a node waiting on its gate keeps its slot: no other node starts in it until the gate passes', () => {
    const w = gatedWorld({
      compartments: [
        { name: 'all', selector: { matchLabels: { 'skyhook.nvidia.com/test-node': 'yes' } }, budget: { count: 1 } },
      ],
      healthGates: { beforeBatch: GATES.beforeBatch! },
    });
    let settled = false;
    const results = () => ({
      p: {
        n0: { [gateKey('beforeBatch', 'settled')]: settled ? { passed: true } : { passed: false, detail: 'not yet' } },
      },
    });
    runUntil(w, results, () => waitingOf(w, 'n0')?.startsWith('HealthGate:') === true);
    for (let i = 0; i < 5; i++) {
      step(w, results());
      w.now += 5_000;
    }
    expect(statusOf(w, 'n1')).not.toBe('in_progress');
    settled = true;
    runUntil(w, results, () => statusOf(w, 'n1') === 'in_progress');
    expect(statusOf(w, 'n0')).toBe('complete');
  });
});

describe('beforeUncordon gates after an interrupt', () => {
  const uncordon = {
    beforeUncordon: [
      { name: 'validated', timeout: '2m', nodeConditions: [{ type: 'Validated', status: 'True' as const }] },
    ],
  };

  it('keeps the node cordoned until the gate passes, and erroring with the gate reason once it times out', () => {
    const w = gatedWorld({ healthGates: uncordon }, true);
    let validated = false;
    const results = () => ({
      p: {
        n0: {
          [gateKey('beforeUncordon', 'validated')]: validated
            ? { passed: true }
            : { passed: false, detail: 'condition Validated is absent, want True' },
        },
      },
    });
    runUntil(w, results, () => waitingOf(w, 'n0')?.startsWith('HealthGate:') === true);
    const n0 = nodeNamed(w, 'n0');
    expect(n0.unschedulable).toBe(true);
    expect(n0.annotations[claim]).toBe('true');
    w.now += 121_000;
    const actions = step(w, results());
    expect(actions.some((a) => a.kind === 'releaseNodeCordon')).toBe(false);
    expect(statusOf(w, 'n0')).toBe('erroring');
    expect(waitingOf(w, 'n0')).toContain('HealthGateTimedOut: beforeUncordon gate validated did not pass within 2m');
    expect(nodeNamed(w, 'n0').unschedulable).toBe(true);
    // n1 never starts: the cordoned node keeps the only slot of the budget.
    for (let i = 0; i < 3; i++) {
      step(w, results());
      w.now += 30_000;
    }
    expect(statusOf(w, 'n1')).not.toBe('in_progress');
    validated = true;
    runUntil(w, results, () => statusOf(w, 'n0') === 'complete');
    expect(nodeNamed(w, 'n0').unschedulable).toBe(false);
    expect(nodeNamed(w, 'n0').annotations[claim]).toBeUndefined();
  });
});

describe('gate problems', () => {
  it('a policy whose gate expression does not compile blocks its Skyhooks with InvalidSpec naming the field', () => {
    const w = gatedWorld({ healthGates: { beforeBatch: [{ name: 'bad', cel: 'node.' }] } });
    const problem = 'DeploymentPolicy p spec.healthGates.beforeBatch[0].cel: Unexpected token: EOF';
    const actions = step(w, {}, { p: [problem] });
    expect(actions.some((a) => a.kind === 'createStageOp')).toBe(false);
    const status = actions.find((a) => a.kind === 'setSkyhookStatus');
    const invalid =
      status?.kind === 'setSkyhookStatus' ? status.status.conditions?.find((c) => c.type === 'InvalidSpec') : undefined;
    expect(invalid?.message).toContain(problem);
  });
});
