/**
 * Overlapping compartments (two exponential compartments of 2 nodes, and a fixed one for the nodes
 * matching both): each compartment's batch state moves to its second batch once its first is done,
 * as upstream's does, batch by batch.
 */
import { describe, expect, it } from '@jest/globals';
import { OVERLAPPING_COMPARTMENTS } from '../../../../fixtures/overlapping-compartments.js';
import { node, pkg, policy, runToQuiet, scr, SELECTOR_LABEL, world } from './world.js';

type Step = [currentBatch: number, lastBatchSize: number, completedNodes: number];

describe('batch state of overlapping compartments', () => {
  it('advances each compartment to batch 2 after its first batch, and keeps it with resetBatchStateOnCompletion false', () => {
    const labels = (extra: Record<string, string>) => ({ [SELECTOR_LABEL]: 'yes', ...extra });
    const nodes = [
      node('w0', 0, labels({ region: 'us-west' })),
      node('w1', 1, labels({ region: 'us-west' })),
      node('p0', 2, labels({ env: 'production' })),
      node('p1', 3, labels({ env: 'production' })),
      node('b0', 4, labels({ region: 'us-west', env: 'production' })),
      node('b1', 5, labels({ region: 'us-west', env: 'production' })),
    ];
    const skyhook = scr('s', {
      deploymentPolicy: 'p',
      deploymentPolicyOptions: { resetBatchStateOnCompletion: false },
      packages: { a: pkg('1.0.0') },
    });
    const w = world([skyhook], nodes);
    w.policies = [policy('p', OVERLAPPING_COMPARTMENTS)];
    const steps = new Map<string, Step[]>();
    runToQuiet(w, 80, () => {
      for (const [name, status] of Object.entries(skyhook.status?.compartmentStatuses ?? {})) {
        const state = status.batchState;
        if (!state?.lastBatchSize) continue;
        const current: Step = [state.currentBatch ?? 1, state.lastBatchSize, state.completedNodes ?? 0];
        const list = steps.get(name) ?? [];
        if (JSON.stringify(list.at(-1)) !== JSON.stringify(current)) list.push(current);
        steps.set(name, list);
      }
    });
    expect(skyhook.status?.status).toBe('complete');
    for (const name of ['us-west', 'production', 'prod-us-west'])
      expect([name, steps.get(name)]).toEqual([
        name,
        [
          [1, 1, 0],
          [2, 1, 1],
        ],
      ]);
  });
});
