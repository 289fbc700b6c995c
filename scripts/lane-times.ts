/**
 * How long each real-node file took (scripts/jest/real-node-files.cjs: the files that run one at a
 * time, machine-wide), read from jest's `--json` result, so `npm test` prints the serial lane's cost
 * file by file and in total. The lane is the run's long pole: its files cannot overlap one another.
 * Pure, unit-tested in test/unit/scripts/lane-times.test.ts.
 */
import { relative } from 'node:path';

/** The part of one file's entry in jest's `--json` result this module reads. */
export interface TimedSuite {
  name: string;
  status: string;
  startTime?: number;
  endTime?: number;
}

/** Lines naming each real-node file's duration (slowest first) and the lane's total; none without such files. */
export function laneTimeLines(suites: TimedSuite[], isLaneFile: (path: string) => boolean, root: string): string[] {
  const timed = suites
    .filter((s) => isLaneFile(s.name) && s.startTime !== undefined && s.endTime !== undefined)
    .map((s) => ({ file: relative(root, s.name), status: s.status, seconds: (s.endTime! - s.startTime!) / 1000 }))
    .sort((a, b) => b.seconds - a.seconds);
  if (timed.length === 0) return [];
  const width = Math.max(...timed.map((t) => t.file.length));
  const total = timed.reduce((sum, t) => sum + t.seconds, 0);
  return [
    `real-node lane (one file at a time): ${timed.length} file(s), ${total.toFixed(1)} s in all`,
    ...timed.map((t) => `  ${t.file.padEnd(width)}  ${t.seconds.toFixed(1).padStart(6)} s  ${t.status}`),
  ];
}
