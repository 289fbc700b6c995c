/**
 * The apply path asks the cluster budgets' arbiter right before an SCR's interrupt cordon: a refusal
 * writes nothing for that node, and no later action of that node in the pass that assumes the
 * cordon (a stage op created with `cordon: true`) is applied either.
 */
import { describe, expect, it } from '@jest/globals';
import type { Skyhook } from '../../../../../src/api/skyhook.js';
import type { DisruptionArbiter } from '../../../../../src/controllers/disruption/arbiter.js';
import type { SkyhookIo } from '../../../../../src/controllers/skyhook/context.js';
import type { PlannerAction } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { applyActions } from '../../../../../src/controllers/skyhook/write/apply-actions.js';
import { silentLogger } from '../../../../../src/kube/logger.js';

const skyhook: Skyhook = {
  apiVersion: 'skyhook.nvidia.com/v1alpha1',
  kind: 'Skyhook',
  metadata: { name: 's' },
  spec: { packages: {} },
};

/** Any use of the cluster fails the test: nothing may be written for a refused node. */
const noCluster = new Proxy(
  {},
  {
    get: (_target, property) => {
      throw new Error(`unexpected cluster access: ${String(property)}`);
    },
  },
);

function io(arbiter: DisruptionArbiter, asked: string[]): SkyhookIo {
  const recording: DisruptionArbiter = {
    tryAcquire: (node, holder) => {
      asked.push(`${node} ${holder}`);
      return arbiter.tryAcquire(node, holder);
    },
  };
  const settings = { namespace: 'skyhook' };
  return {
    clients: noCluster,
    caches: noCluster,
    settings,
    arbiter: recording,
    logger: silentLogger(),
  } as unknown as SkyhookIo;
}

const refuseAll: DisruptionArbiter = {
  tryAcquire: () => ({ granted: false, budget: 'one', reason: 'DisruptionBudget one allows 1 …' }),
};

describe('the cluster budget at apply time', () => {
  it('asks for the SCR cordon as skyhook/<scr>, and a refusal skips the cordon and the stages that assume it', async () => {
    const asked: string[] = [];
    const actions: PlannerAction[] = [
      { kind: 'cordonNode', node: 'n1', claim: 'skyhook.nvidia.com/cordon_s', reason: 'packages with interrupts: k' },
      {
        kind: 'createStageOp',
        skyhook: 's',
        node: 'n1',
        package: { name: 'k', version: '1.0.0', image: 'img' },
        stage: 'apply',
        previousRestarts: 0,
        cordon: true,
      },
    ];
    // Actions the planner's buckets do not claim: each a step of its own.
    await applyActions(
      io(refuseAll, asked),
      skyhook,
      actions.map((action) => [action]),
    );
    expect(asked).toEqual(['n1 skyhook/s']);
  });

  it('does not ask for the runtime-required cordon of a new node (not a disruption)', async () => {
    const asked: string[] = [];
    const runtimeRequired: PlannerAction = {
      kind: 'cordonNode',
      node: 'n1',
      claim: 'skyhook.nvidia.com/runtimeRequiredCordon',
      reason: 'new node',
    };
    await expect(applyActions(io(refuseAll, asked), skyhook, [[runtimeRequired]])).rejects.toThrow(
      'unexpected cluster access: core',
    );
    expect(asked).toEqual([]);
  });
});
