/**
 * Which SCRs a node update wakes now, and which it defers. An SCR whose caches still miss some of its
 * own writes would only wait again if woken (200 nodes x 5 SCRs: 2799 such reconciles of 6329), so
 * it is not woken yet. Its wake must be deferred, not dropped: a later-priority SCR learns that an
 * earlier one completed on a node from one node update only (views/node-wakes.ts wakes it on that
 * `status_` change and no other), and a dropped wake left it idle on that node until some other
 * event named it: another node's progress, or the informers' relist ten minutes later. That is a
 * priority chain stalled on one node until the other node moved on. A deferred SCR joins those
 * waiting for their caches, which every node update offers again until its caches have caught up.
 */

/** The reconciler's view of the SCRs waiting to see their own writes (reconciler.ts). */
export interface CacheCatchUp {
  waitingForCaches(): ReadonlySet<string>;
  cachesBehind(scr: string): boolean;
  deferWake(scr: string): void;
}

/** The SCRs to reconcile now: the woken and the waiting whose caches have caught up; the others are deferred. */
export function wakeCaughtUp(wakes: readonly string[], caught: CacheCatchUp): string[] {
  const candidates = new Set([...wakes, ...caught.waitingForCaches()]);
  const woken: string[] = [];
  for (const scr of candidates) {
    if (!caught.cachesBehind(scr)) woken.push(scr);
    else caught.deferWake(scr);
  }
  return woken;
}
