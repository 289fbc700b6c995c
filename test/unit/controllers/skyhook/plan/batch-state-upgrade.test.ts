/**
 * A package version change resets the batch state once, when it happens (upstream's reset "on
 * package version change"), not on every pass of the upgrade: the upgrade's batches advance.
 */
import { describe, expect, it } from '@jest/globals';
import { node, pkg, policy, runToQuiet, scr, world } from './world.js';

describe('batch state through an upgrade', () => {
  it('resets at the version change, then advances batch by batch', () => {
    const nodes = Array.from({ length: 6 }, (_, i) => node(`n${i}`, i));
    const skyhook = scr('s', { deploymentPolicy: 'p', packages: { a: pkg('1.0.0') } });
    const w = world([skyhook], nodes);
    w.policies = [
      policy('p', { default: { budget: { count: 3 }, strategy: { linear: { initialBatch: 1, delta: 1 } } } }),
    ];
    runToQuiet(w, 80);
    expect(skyhook.status?.status).toBe('complete');
    skyhook.spec.packages = { a: pkg('2.0.0') };
    skyhook.metadata.generation = (skyhook.metadata.generation ?? 1) + 1;
    const batches: string[] = [];
    runToQuiet(w, 80, () => {
      const state = skyhook.status?.compartmentStatuses?.['__default__']?.batchState;
      const seen = `${state?.currentBatch ?? 1}/${state?.lastBatchSize ?? 0}/${state?.completedNodes ?? 0}`;
      if (batches.at(-1) !== seen) batches.push(seen);
    });
    expect(skyhook.status?.status).toBe('complete');
    // currentBatch/lastBatchSize/completedNodes: the upgrade's batches 1, 2, 3 (1 + 2 + 3 nodes), the
    // first one picked in the pass that reset the state; then the reset at completion.
    expect(batches).toEqual(['1/1/0', '2/2/1', '3/3/3', '1/0/0']);
  });

  it('a version change in the middle of a rollout starts the batches over, and they advance again', () => {
    const nodes = Array.from({ length: 6 }, (_, i) => node(`n${i}`, i));
    const skyhook = scr('s', { deploymentPolicy: 'p', packages: { a: pkg('1.0.0') } });
    const w = world([skyhook], nodes);
    w.policies = [
      policy('p', { default: { budget: { count: 3 }, strategy: { linear: { initialBatch: 1, delta: 1 } } } }),
    ];
    const stateOf = () => skyhook.status?.compartmentStatuses?.['__default__']?.batchState;
    // Up to batch 2 of the install.
    for (let i = 0; i < 40 && (stateOf()?.currentBatch ?? 1) < 2; i++) runToQuiet(w, 1);
    expect(stateOf()).toMatchObject({ currentBatch: 2, lastBatchSize: 2 });
    skyhook.spec.packages = { a: pkg('2.0.0') };
    const batches: number[] = [];
    runToQuiet(w, 80, () => {
      const batch = stateOf()?.currentBatch ?? 1;
      if (batches.at(-1) !== batch) batches.push(batch);
    });
    expect(skyhook.status?.status).toBe('complete');
    // Back to 1 with the change, batches after it, then the reset at completion.
    expect(batches[0]).toBe(1);
    expect(Math.max(...batches)).toBeGreaterThan(1);
    expect(batches.at(-1)).toBe(1);
  });
});
