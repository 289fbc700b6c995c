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
    const batches: number[] = [];
    runToQuiet(w, 80, () => {
      const batch = skyhook.status?.compartmentStatuses?.['__default__']?.batchState?.currentBatch ?? 1;
      if (batches.at(-1) !== batch) batches.push(batch);
    });
    expect(skyhook.status?.status).toBe('complete');
    // Batches 1, 2, 3 of the upgrade (1 + 2 + 3 nodes), then the reset at completion.
    expect(batches).toEqual([1, 2, 3, 1]);
  });
});
