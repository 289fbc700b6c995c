/**
 * runBounded, the failure semantics of the concurrent writes: never more than the bound in flight,
 * no task started after the first failure, the ones in flight awaited, that first failure thrown and
 * the later ones handed to the caller's log.
 */
import { describe, expect, it } from '@jest/globals';
import { runBounded, writeLimit } from '../../../../../src/controllers/skyhook/write/bounded-writes.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('runBounded', () => {
  it('runs every task, at most the bound at once', async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    const tasks = Array.from({ length: 10 }, (_, i) => async () => {
      most = Math.max(most, ++inFlight);
      await sleep(1 + (i % 3));
      inFlight--;
      done.push(i);
    });
    await runBounded(writeLimit(3), tasks);
    expect(most).toBe(3);
    expect(done.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('throws the first failure after the tasks in flight settle, starts none after it, reports the later ones', async () => {
    const started: string[] = [];
    const settled: string[] = [];
    const task =
      (name: string, ms: number, fails = false) =>
      async () => {
        started.push(name);
        await sleep(ms);
        settled.push(name);
        if (fails) throw new Error(`${name} failed`);
      };
    let later: unknown[] = [];
    const run = runBounded(
      writeLimit(3),
      [task('slow', 20), task('first', 2, true), task('second', 5, true), task('queued', 1)],
      (errors) => {
        later = errors;
      },
    );
    await expect(run).rejects.toThrow('first failed');
    expect(started).toEqual(['slow', 'first', 'second']);
    expect(settled.sort()).toEqual(['first', 'second', 'slow']);
    expect(later.map((e) => (e as Error).message)).toEqual(['second failed']);
  });

  it('treats a bound below one as one', async () => {
    let inFlight = 0;
    let most = 0;
    const tasks = Array.from({ length: 4 }, () => async () => {
      most = Math.max(most, ++inFlight);
      await sleep(1);
      inFlight--;
    });
    await runBounded(writeLimit(0), tasks);
    expect(most).toBe(1);
  });
});
