/**
 * `npm run test:repeat -- <test files> [--runs N] [--hog]`: the flake meter. Runs each file on its
 * own, N times (round-robin, so a slow period of the machine spreads over the files), judged as
 * `npm test` judges a run (scripts/test-results.ts: a crash, a re-run or a skipped test fails it),
 * and prints per file how many runs passed and how long they took. `--hog` keeps one CPU-bound
 * process running beside the tests the whole time, as another job on a shared CI machine would.
 * Exits non-zero when any run failed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { newRunDir, runJest } from './test-jest.js';
import { judgeRun, render } from './test-results.js';

export interface RepeatOptions {
  files: string[];
  runs: number;
  hog: boolean;
}

export function parseRepeatArgs(argv: string[]): RepeatOptions {
  const files: string[] = [];
  let runs = 3;
  let hog = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--hog') hog = true;
    else if (arg === '--runs') {
      runs = Number(argv[++i]);
      if (!Number.isInteger(runs) || runs < 1)
        throw new Error(`--runs needs a whole number of at least 1, got ${argv[i]}`);
    } else if (arg.startsWith('--runs=')) runs = Number(arg.slice('--runs='.length));
    else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}; use: <test files> [--runs N] [--hog]`);
    else files.push(arg);
  }
  if (files.length === 0) throw new Error('name the test files to repeat, e.g. test/e2e/skyhook-rollout.test.ts');
  return { files, runs, hog };
}

export interface FileRuns {
  file: string;
  outcomes: { ok: boolean; seconds: number; why: string }[];
}

/** One line per file: passes out of runs, and the durations' minimum, median and maximum. */
export function formatRepeat(results: FileRuns[]): string[] {
  const lines = ['file                                              passed  min s  median s  max s'];
  for (const { file, outcomes } of results) {
    const secs = outcomes.map((o) => o.seconds).sort((a, b) => a - b);
    const median = secs[Math.floor(secs.length / 2)] ?? 0;
    const passed = outcomes.filter((o) => o.ok).length;
    lines.push(
      `${file.padEnd(50)}${`${passed}/${outcomes.length}`.padStart(6)}${(secs[0] ?? 0).toFixed(1).padStart(7)}${median.toFixed(1).padStart(10)}${(secs.at(-1) ?? 0).toFixed(1).padStart(7)}`,
    );
    for (const [i, o] of outcomes.entries()) if (!o.ok) lines.push(`  run ${i + 1} failed: ${o.why}`);
  }
  return lines;
}

function startHog(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) Math.sqrt(Math.random());'], { stdio: 'ignore' });
}

async function main(): Promise<number> {
  const options = parseRepeatArgs(process.argv.slice(2));
  const hog = options.hog ? startHog() : undefined;
  const results: FileRuns[] = options.files.map((file) => ({ file: relative('.', resolve(file)), outcomes: [] }));
  try {
    for (let run = 1; run <= options.runs; run++) {
      for (const entry of results) {
        const runDir = newRunDir();
        const started = Date.now();
        try {
          const evidence = runJest({
            label: entry.file,
            suffix: '',
            config: 'jest.config.js',
            args: [entry.file],
            expectedFiles: 1,
            runDir,
            outputFile: join(runDir, 'result.json'),
          });
          const seconds = (Date.now() - started) / 1000;
          const verdict = evidence ? render(judgeRun(evidence)) : { ok: false, lines: ['selected no file'] };
          const why = verdict.lines.filter((l) => l.startsWith('FAILED') || l.startsWith('SKIPPED')).join('; ');
          entry.outcomes.push({ ok: verdict.ok, seconds, why: why.slice(0, 300) || (verdict.lines.at(-1) ?? '') });
          console.log(
            `[test:repeat] run ${run}/${options.runs} ${entry.file}: ${verdict.ok ? 'passed' : 'FAILED'} in ${seconds.toFixed(1)} s`,
          );
        } finally {
          rmSync(runDir, { recursive: true, force: true });
        }
      }
    }
  } finally {
    hog?.kill('SIGKILL');
  }
  console.log(`\n${options.hog ? 'with a CPU hog beside the tests\n' : ''}${formatRepeat(results).join('\n')}`);
  return results.every((r) => r.outcomes.every((o) => o.ok)) ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await main());
