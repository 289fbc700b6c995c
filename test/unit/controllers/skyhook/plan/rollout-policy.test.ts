import { describe, expect, it } from '@jest/globals';
import type { DeploymentPolicySpec } from '../../../../../src/api/deployment-policy.js';
import { nodeAnnotations, RUNTIME_REQUIRED_CORDON_ANNOTATION } from '../../../../../src/api/names.js';
import { evaluateBatch, nextBatchSize } from '../../../../../src/controllers/skyhook/plan/batch-strategy.js';
import { buildCompartments, strategyParams } from '../../../../../src/controllers/skyhook/plan/compartments.js';
import {
  applyActions,
  finishOps,
  node,
  nodeNamed,
  pkg,
  plan,
  policy,
  runToQuiet,
  scr,
  SELECTOR_LABEL,
  world,
} from './world.js';

const labelled = (name: string, i: number, extra: Record<string, string>) =>
  node(name, i, { [SELECTOR_LABEL]: 'yes', ...extra });

describe('compartments', () => {
  it('overlapping selectors: safest strategy, then smaller ceiling, then name; unmatched nodes go to __default__', () => {
    const nodes = [
      labelled('a', 0, { region: 'us-west', env: 'prod' }),
      labelled('b', 1, { region: 'us-west' }),
      labelled('c', 2, { env: 'prod' }),
      labelled('d', 3, {}),
    ];
    const spec: DeploymentPolicySpec = {
      default: { budget: { count: 1 }, strategy: { fixed: {} } },
      compartments: [
        {
          name: 'us-west',
          selector: { matchLabels: { region: 'us-west' } },
          budget: { count: 2 },
          strategy: { exponential: {} },
        },
        {
          name: 'production',
          selector: { matchLabels: { env: 'prod' } },
          budget: { percent: 50 },
          strategy: { linear: {} },
        },
      ],
    };
    const built = buildCompartments({}, spec, nodes);
    expect(built.map((c) => [c.name, c.nodes, c.ceiling, c.strategy?.kind])).toEqual([
      ['us-west', ['b'], 2, 'exponential'],
      ['production', ['a', 'c'], 1, 'linear'],
      ['__default__', ['d'], 1, 'fixed'],
    ]);
    expect(buildCompartments({ interruptionBudget: { percent: 20 } }, undefined, nodes)).toEqual([
      { name: '__default__', nodes: ['a', 'b', 'c', 'd'], ceiling: 1, legacy: true },
    ]);
  });
});

describe('batch strategies', () => {
  const params = (strategy: Parameters<typeof strategyParams>[0]) => strategyParams(strategy)!;
  it('sizes batches by their formulas, shrinking after a failed batch below the safety limit', () => {
    const linear = params({ linear: { initialBatch: 2, delta: 3 } });
    expect(nextBatchSize(linear, {}, 100)).toBe(2);
    expect(nextBatchSize(linear, { lastBatchSize: 2, completedNodes: 2 }, 100)).toBe(5);
    expect(
      nextBatchSize(linear, { lastBatchSize: 5, completedNodes: 2, failedNodes: 5, lastBatchFailed: true }, 100),
    ).toBe(2);
    const exponential = params({ exponential: { initialBatch: 1, growthFactor: 3 } });
    expect(nextBatchSize(exponential, { lastBatchSize: 3, completedNodes: 4 }, 100)).toBe(9);
    expect(
      nextBatchSize(exponential, { lastBatchSize: 9, completedNodes: 4, failedNodes: 9, lastBatchFailed: true }, 100),
    ).toBe(3);
    expect(nextBatchSize(exponential, { lastBatchSize: 9, completedNodes: 13 }, 20)).toBe(7);
    expect(nextBatchSize(params({ fixed: { initialBatch: 4 } }), { lastBatchSize: 4, completedNodes: 4 }, 10)).toBe(4);
  });

  it('judges a batch by completed / (completed + failed) and stops after failureThreshold failures below the safety limit', () => {
    const fixed = params({ fixed: { initialBatch: 2, batchThreshold: 100, failureThreshold: 2, safetyLimit: 50 } });
    const once = evaluateBatch(fixed, { currentBatch: 1, lastBatchSize: 2 }, { completed: 1, failed: 1, total: 10 });
    expect(once).toEqual({
      currentBatch: 2,
      consecutiveFailures: 1,
      completedNodes: 1,
      failedNodes: 1,
      lastBatchSize: 2,
      lastBatchFailed: true,
    });
    const twice = evaluateBatch(fixed, once, { completed: 1, failed: 3, total: 10 });
    expect(twice).toMatchObject({ currentBatch: 3, consecutiveFailures: 2, shouldStop: true });
    expect(evaluateBatch(fixed, once, { completed: 3, failed: 1, total: 10 })).toEqual({
      currentBatch: 3,
      completedNodes: 3,
      failedNodes: 1,
      lastBatchSize: 2,
    });
    expect(evaluateBatch(fixed, once, { completed: 1, failed: 1, total: 10 })).toBe(once);
  });
});

const GONE = 'DeploymentPolicy "gone" not found';

describe('rollout with a DeploymentPolicy', () => {
  it('a missing policy blocks the SCR with DeploymentPolicyNotFound and starts nothing', () => {
    const w = world([scr('s', { deploymentPolicy: 'gone', packages: { a: pkg('1.0.0') } })], [node('n0')]);
    w.policies = [];
    const { actions } = plan(w);
    applyActions(w, actions);
    expect(actions.some((a) => a.kind === 'createStageOp')).toBe(false);
    expect(w.skyhooks[0]!.status).toMatchObject({ status: 'blocked', nodeStatus: { n0: 'blocked' } });
    expect(w.skyhooks[0]!.status?.conditions?.find((c) => c.type === 'DeploymentPolicyNotFound')).toMatchObject({
      status: 'True',
      message: `${GONE}; create it, or change spec.deploymentPolicy (nothing starts until then, work in progress is kept)`,
    });
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('s')]).toBe(
      `DeploymentPolicyNotFound: ${GONE}; create it, or change spec.deploymentPolicy (nothing starts until then, work in progress is kept)`,
    );
  });

  it('linear batches grow by delta, the budget caps them, and completion resets the batch state when asked', () => {
    const nodes = Array.from({ length: 8 }, (_, i) => node(`n${i}`, i));
    const skyhook = scr('s', { deploymentPolicy: 'p', packages: { a: pkg('1.0.0') } });
    const w = world([skyhook], nodes);
    w.policies = [
      policy('p', { default: { budget: { count: 3 }, strategy: { linear: { initialBatch: 1, delta: 1 } } } }),
    ];
    const batches: number[] = [];
    runToQuiet(w, 80, () => {
      const size = skyhook.status?.compartmentStatuses?.['__default__']?.batchState?.lastBatchSize;
      if (size !== undefined && batches.at(-1) !== size) batches.push(size);
      expect(
        Object.values(skyhook.status?.nodeStatus ?? {}).filter((s) => s === 'in_progress').length,
      ).toBeLessThanOrEqual(3);
    });
    expect(batches).toEqual([1, 2, 3, 2]); // capped by the budget (3), then by the 2 nodes left
    expect(skyhook.status?.status).toBe('complete');
    expect(skyhook.status?.compartmentStatuses?.['__default__']).toEqual({
      matched: 8,
      ceiling: 3,
      inProgress: 0,
      completed: 8,
      progressPercent: 100,
      batchState: { currentBatch: 1 },
    });

    const kept = scr('k', {
      deploymentPolicy: 'p',
      deploymentPolicyOptions: { resetBatchStateOnCompletion: false },
      packages: { a: pkg('1.0.0') },
    });
    const w2 = world(
      [kept],
      nodes.map((n, i) => node(n.name, i)),
    );
    w2.policies = w.policies;
    runToQuiet(w2, 80);
    expect(kept.status?.compartmentStatuses?.['__default__']?.batchState?.currentBatch).toBeGreaterThan(1);
  });

  it('failureThreshold stops the compartment: no new nodes once enough batches failed', () => {
    const nodes = Array.from({ length: 6 }, (_, i) => node(`n${i}`, i));
    const skyhook = scr('s', { deploymentPolicy: 'p', packages: { a: pkg('1.0.0') } });
    const w = world([skyhook], nodes);
    w.policies = [
      policy('p', {
        default: {
          budget: { count: 6 },
          strategy: { fixed: { initialBatch: 1, failureThreshold: 2, safetyLimit: 100 } },
        },
      }),
    ];
    for (let round = 0; round < 30; round++) {
      applyActions(w, plan(w).actions);
      finishOps(w, 'Failed');
      w.now += 600_000;
    }
    const started = new Set(w.created.map((op) => op.node));
    expect(started.size).toBe(2);
    expect(skyhook.status?.compartmentStatuses?.['__default__']?.batchState).toMatchObject({
      shouldStop: true,
      consecutiveFailures: 2,
    });
    expect(nodeNamed(w, 'n5').annotations[nodeAnnotations.waiting('s')]).toMatch(/^RolloutStopped:/);
  });
});

describe('runtimeRequired', () => {
  const taint = { key: 'skyhook.nvidia.com', value: 'runtime-required', effect: 'NoSchedule' };
  it('removes the taint per node once every runtimeRequired SCR is complete there; untolerated taints block', () => {
    const w = world(
      [scr('rr', { runtimeRequired: true, runtimeRequiredCordonAfter: true, packages: { a: pkg('1.0.0') } })],
      [node('n0'), node('n1', 1)],
    );
    nodeNamed(w, 'n0').taints.push({ ...taint });
    nodeNamed(w, 'n1').taints.push({ ...taint }, { key: 'test-block', effect: 'NoSchedule' });
    runToQuiet(w);
    expect(nodeNamed(w, 'n0').taints).toEqual([]);
    expect(nodeNamed(w, 'n0').annotations[RUNTIME_REQUIRED_CORDON_ANNOTATION]).toBe('true');
    expect(nodeNamed(w, 'n0').unschedulable).toBe(true);
    expect(nodeNamed(w, 'n1').taints).toHaveLength(2);
    expect(w.skyhooks[0]!.status?.nodeStatus).toEqual({ n0: 'complete', n1: 'blocked' });
  });

  it('autoTaintNewNodes taints only nodes nothing of ours touched', () => {
    const w = world(
      [scr('rr', { runtimeRequired: true, autoTaintNewNodes: true, packages: { a: pkg('1.0.0') } })],
      [node('fresh'), node('known', 1)],
    );
    nodeNamed(w, 'known').annotations[nodeAnnotations.status('other')] = 'complete';
    const { actions } = plan(w);
    expect(actions.filter((a) => a.kind === 'addNodeTaint')).toEqual([
      { kind: 'addNodeTaint', node: 'fresh', taint, annotations: { [nodeAnnotations.autoTaint(taint.key)]: 'true' } },
    ]);
    applyActions(w, actions);
    runToQuiet(w);
    expect(nodeNamed(w, 'fresh').taints).toEqual([]);
    expect(nodeNamed(w, 'fresh').annotations[nodeAnnotations.autoTaint(taint.key)]).toBe('true');
  });
});
