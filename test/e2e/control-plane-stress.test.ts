/**
 * Issue 13: a control-plane start must not fail by chance. Twenty starts, two at a time (as jest's
 * two workers do), each to Ready and stopped again; every one has to succeed and leave no process.
 * Prints each start's and stop's duration.
 */
import { describe, expect, it } from '@jest/globals';
import pLimit from 'p-limit';
import { startControlPlane } from '../../src/sandbox/control-plane.js';
import { waitUntilGone } from '../../src/sandbox/processes.js';

const STARTS = 20;
const AT_ONCE = 2;

interface Outcome {
  index: number;
  startMs?: number;
  stopMs?: number;
  leftover?: number[];
  error?: string;
}

async function startAndStop(index: number): Promise<Outcome> {
  const began = Date.now();
  try {
    const cp = await startControlPlane({ nodes: 1 });
    const startMs = Date.now() - began;
    const stopBegan = Date.now();
    await cp.stop();
    return { index, startMs, stopMs: Date.now() - stopBegan, leftover: await waitUntilGone(cp.pids) };
  } catch (error) {
    return { index, error: error instanceof Error ? error.message : String(error) };
  }
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): string =>
    ((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) / 1000).toFixed(1);
  return `min ${at(0)} s, median ${at(0.5)} s, max ${at(1)} s`;
}

describe('control-plane start under stress', () => {
  it(
    `succeeds ${STARTS} times out of ${STARTS}, ${AT_ONCE} at a time, leaving no process`,
    async () => {
      const limit = pLimit(AT_ONCE);
      const began = Date.now();
      const outcomes = await Promise.all(Array.from({ length: STARTS }, (_, i) => limit(() => startAndStop(i))));
      const ok = outcomes.filter((o) => o.error === undefined);
      console.log(
        [
          `${ok.length}/${STARTS} control planes (1 node each) started to Ready and stopped, ${AT_ONCE} at a time, in ${((Date.now() - began) / 1000).toFixed(1)} s`,
          `start: ${summary(ok.map((o) => o.startMs ?? 0))}; stop: ${summary(ok.map((o) => o.stopMs ?? 0))}`,
          ...outcomes.map(
            (o) =>
              `#${o.index}: ${o.error ? `FAILED ${o.error}` : `start ${((o.startMs ?? 0) / 1000).toFixed(1)} s, stop ${((o.stopMs ?? 0) / 1000).toFixed(1)} s`}`,
          ),
        ].join('\n'),
      );
      expect(outcomes.filter((o) => o.error !== undefined)).toEqual([]);
      expect(outcomes.filter((o) => (o.leftover ?? []).length > 0)).toEqual([]);
    },
    15 * 60_000,
  );
});
