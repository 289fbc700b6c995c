/**
 * The SCR status pacing inside the controller loop it runs in (the real WorkQueue and workers, a fake
 * clock): whatever the sequence of status changes and when they come, a progress write held back is
 * made at most one interval after the last change even when no further event comes, a decisive
 * change is written at once, and the status written last is the latest one.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { SkyhookStatus } from '../../../../src/api/skyhook.js';
import {
  pacedStatusWrite,
  STATUS_PROGRESS_INTERVAL_MS,
  StatusWritePacing,
} from '../../../../src/controllers/skyhook/status-write-pacing.js';
import { silentLogger } from '../../../../src/kube/logger.js';
import { runWorkers, WorkQueue, type ReconcileResult } from '../../../../src/kube/queue.js';
import { FakeClock, settle } from '../../kube/fake-clock.js';

/** One change of the cluster the SCR's status is derived from, `afterMs` after the previous one. */
interface Change {
  afterMs: number;
  /** A decisive change (the status value) or progress only (a count). */
  decisive: boolean;
  /** The plan's own requeue, if it asks for one (a backoff, a retention expiry). */
  planRequeueMs?: number;
}

const changeArb: fc.Arbitrary<Change> = fc.record(
  {
    afterMs: fc.integer({ min: 0, max: 5_000 }),
    decisive: fc.boolean(),
    planRequeueMs: fc.integer({ min: 1, max: 20_000 }),
  },
  { requiredKeys: ['afterMs', 'decisive'] },
);

async function run(changes: Change[]): Promise<void> {
  const clock = new FakeClock();
  const queue = new WorkQueue({ name: 'skyhook', clock });
  const pacing = new StatusWritePacing();
  const key = 'scr';
  /** What the planner would compute now, and the status as the API server (and, at once, the cache) has it. */
  let desired: SkyhookStatus = { status: 'in_progress', completeNodes: '0/10' };
  let stored: SkyhookStatus | undefined;
  let planRequeueMs: number | undefined;
  const decisiveWrites: { at: number; wanted: number }[] = [];
  let decisiveSince: number | undefined;
  const reconcile = async (): Promise<ReconcileResult> => {
    const now = clock.now();
    const next = JSON.stringify(desired) === JSON.stringify(stored) ? undefined : desired;
    const step = pacedStatusWrite(pacing, key, stored, next, now, planRequeueMs);
    if (step.write) {
      if (decisiveSince !== undefined && stored?.status !== desired.status)
        decisiveWrites.push({ at: now, wanted: decisiveSince });
      decisiveSince = undefined;
      stored = desired;
      pacing.written(key, now);
      // The write's own watch event wakes the SCR again, as the informer does.
      queue.add(key);
    }
    return step.requeueAfterMs === undefined ? undefined : { requeueAfterMs: step.requeueAfterMs };
  };
  const workers = runWorkers(queue, 1, reconcile, { logger: silentLogger(), clock });
  queue.add(key);
  await settle();
  let count = 0;
  for (const change of changes) {
    await clock.advance(change.afterMs);
    count++;
    desired = change.decisive
      ? { ...desired, status: desired.status === 'in_progress' ? 'erroring' : 'in_progress' }
      : { ...desired, completeNodes: `${count}/10` };
    if (change.decisive) decisiveSince ??= clock.now();
    planRequeueMs = change.planRequeueMs;
    // The event of the change (a node or NodeOp update) enqueues the SCR.
    queue.add(key);
    await settle();
  }
  // No event after the last change: only the requeues the reconciles asked for run.
  await clock.advance(STATUS_PROGRESS_INTERVAL_MS);
  expect(stored).toEqual(desired);
  for (const write of decisiveWrites) expect(write.at).toBe(write.wanted);
  queue.shutdown();
  await workers;
}

describe('SCR status pacing in the controller loop', () => {
  it('never loses a paced progress write when no further event comes, and writes decisive changes at once', async () => {
    await fc.assert(fc.asyncProperty(fc.array(changeArb, { minLength: 1, maxLength: 30 }), run), { numRuns: 200 });
  });

  it('holds a progress change back no longer than the interval after the previous write', async () => {
    await run([
      { afterMs: 100, decisive: false },
      { afterMs: 100, decisive: false },
    ]);
    await run([
      { afterMs: 0, decisive: false },
      { afterMs: STATUS_PROGRESS_INTERVAL_MS - 1, decisive: false },
    ]);
  });
});
