import { describe, expect, it } from '@jest/globals';
import { type CacheCatchUp, wakeCaughtUp } from '../../../../src/controllers/skyhook/wake-caught-up.js';

/** The reconciler's bookkeeping (reconciler.ts): a deferred or waiting SCR stays listed until it reconciles caught up. */
function catchUp(behind: Set<string>): CacheCatchUp & { reconcile(scr: string): void } {
  const waiting = new Set<string>();
  return {
    waitingForCaches: () => waiting,
    cachesBehind: (scr) => behind.has(scr),
    deferWake: (scr) => {
      waiting.add(scr);
    },
    reconcile: (scr) => {
      if (!behind.has(scr)) waiting.delete(scr);
    },
  };
}

describe('a node update wakes an SCR, or defers the wake until its caches have caught up', () => {
  it('wakes an SCR whose caches have seen its own writes at once', () => {
    expect(wakeCaughtUp(['second'], catchUp(new Set()))).toEqual(['second']);
  });

  it("defers, never drops, the one wake a later priority gets when an earlier SCR completes on a node while that SCR's caches are behind", () => {
    const behind = new Set(['second']);
    const caught = catchUp(behind);
    // 'first' turned complete on node-a: the only node update that names 'second' (views/node-wakes.ts).
    expect(wakeCaughtUp(['second'], caught)).toEqual([]);
    // Its caches catch up; the next node update, about another node and naming no SCR, still wakes it.
    behind.delete('second');
    expect(wakeCaughtUp([], caught)).toEqual(['second']);
    caught.reconcile('second');
    expect(wakeCaughtUp([], caught)).toEqual([]);
  });

  it('keeps offering a deferred wake while the caches stay behind, and wakes the others meanwhile', () => {
    const behind = new Set(['second']);
    const caught = catchUp(behind);
    expect(wakeCaughtUp(['second', 'third'], caught)).toEqual(['third']);
    expect(wakeCaughtUp([], caught)).toEqual([]);
    expect(wakeCaughtUp(['third'], caught)).toEqual(['third']);
    behind.delete('second');
    expect(wakeCaughtUp([], caught)).toEqual(['second']);
  });
});
