/**
 * `npm run test:jest` (the last step of `npm test`): the whole suite against the newest Kubernetes
 * release, then the smoke subset (jest.oldest.config.js) against the oldest supported one.
 * Arguments (test paths, jest flags) go to both runs; a path outside the smoke subset runs only
 * against the newest release.
 *
 * Each run is judged on evidence, not on jest's word alone (scripts/test-results.ts): the files
 * `jest --listTests` selected (without arguments, every test file on disk for the newest run and
 * exactly the smoke files for the oldest), the result file (none: the run crashed), and the attempts
 * log of the run directory (a file started twice was re-run after its worker crashed). The
 * evidence and its verdict are written to .jest-evidence.json; scripts/test-summary.js prints the
 * verdict's lines, ending with the `N passed, N failed` line CI reads.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { laneTimeLines } from './lane-times.js';
import { combine, judgeRun, render, type JestResult, type RunEvidence } from './test-results.js';

const { REAL_NODE_FILE } = createRequire(import.meta.url)('./jest/real-node-files.cjs') as { REAL_NODE_FILE: RegExp };

export const EVIDENCE_FILE = '.jest-evidence.json';
const JEST_BIN = 'node_modules/jest/bin/jest.js';
const NODE_OPTIONS = '--experimental-vm-modules --no-warnings=ExperimentalWarning';

export interface RunSpec {
  label: string;
  suffix: string;
  config: string;
  args: string[];
  /** Exactly this many files must be selected; undefined: any number, but not none. */
  expectedFiles?: number;
  /** Skip the run (not a failure) when the arguments select none of its files. */
  optionalWhenFiltered?: boolean;
  /** The run directory shared by the runs (scripts/jest/run-dir.cjs). */
  runDir: string;
  /** Where jest writes its JSON result. */
  outputFile: string;
  env?: NodeJS.ProcessEnv;
  /** Drops jest's own output (the runner's tests). */
  quiet?: boolean;
}

function runEnv(spec: RunSpec): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...spec.env,
    NODE_OPTIONS,
    SKYHOOK_TEST_RUN_DIR: spec.runDir,
    SKYHOOK_TEST_RUN_KEEP: '1',
  };
}

/** The absolute paths of the files jest would run; undefined when jest could not list them. */
function listTests(spec: RunSpec): string[] | undefined {
  const run = spawnSync(process.execPath, [JEST_BIN, '-c', spec.config, '--listTests', '--json', ...spec.args], {
    env: runEnv(spec),
    encoding: 'utf8',
  });
  try {
    const listed: unknown = JSON.parse(run.stdout.trim().split('\n').pop() ?? '');
    return Array.isArray(listed) ? listed.map(String) : undefined;
  } catch {
    console.error(`[test:jest] jest --listTests failed for ${spec.label}:\n${run.stderr}`);
    return undefined;
  }
}

function reap(runDir: string): void {
  spawnSync(
    process.execPath,
    ['--import', './scripts/register-src-hook.ts', 'scripts/test-reaper.ts', runDir, '--keep-dir'],
    { stdio: 'inherit', env: { ...process.env, SKYHOOK_TEST_RUN_DIR: '' } },
  );
}

/** Runs one jest process and gathers the evidence of what it did; undefined when it had nothing to run. */
export function runJest(spec: RunSpec): RunEvidence | undefined {
  const listed = listTests(spec);
  if (listed && listed.length === 0 && spec.optionalWhenFiltered && spec.args.length > 0) return undefined;
  const attemptsFile = join(spec.runDir, 'attempts');
  rmSync(attemptsFile, { force: true });
  rmSync(spec.outputFile, { force: true });
  const run = spawnSync(
    process.execPath,
    [JEST_BIN, '-c', spec.config, '--json', `--outputFile=${spec.outputFile}`, ...spec.args],
    {
      stdio: spec.quiet ? 'ignore' : 'inherit',
      env: runEnv(spec),
    },
  );
  let result: JestResult | undefined;
  try {
    result = existsSync(spec.outputFile)
      ? (JSON.parse(readFileSync(spec.outputFile, 'utf8')) as JestResult)
      : undefined;
  } catch {
    result = undefined; // cut short while writing
  }
  const lane = laneTimeLines(result?.testResults ?? [], (path) => REAL_NODE_FILE.test(path), '.');
  if (lane.length > 0 && !spec.quiet) console.log(`\n[test:jest] ${spec.label}, ${lane.join('\n')}`);
  const attempts = existsSync(attemptsFile) ? readFileSync(attemptsFile, 'utf8').split('\n').filter(Boolean) : [];
  reap(spec.runDir);
  return {
    label: spec.label,
    suffix: spec.suffix,
    exitCode: run.status,
    result,
    listed: listed ?? [],
    ...(spec.expectedFiles !== undefined ? { expectedFiles: spec.expectedFiles } : {}),
    ...(listed === undefined ? { listError: 'jest --listTests failed (its error is printed above)' } : {}),
    attempts,
  };
}

/** Every test file on disk, as jest.config.js's roots and testMatch should select them. */
export function testFilesOnDisk(root: string): number {
  return readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.test.ts'))
    .length;
}

function oldestVersion(): string {
  const match = /^OLDEST_K8S_VERSION=(\S+)$/m.exec(readFileSync('tools/versions.env', 'utf8'));
  return match ? match[1]! : 'oldest';
}

async function smokeFiles(): Promise<string[]> {
  // The oldest config sets SKYHOOK_K8S for its own jest process; this process must keep the caller's.
  const before = process.env.SKYHOOK_K8S;
  const { SMOKE_FILES } = (await import(resolve('jest.oldest.config.js'))) as { SMOKE_FILES: string[] };
  if (before === undefined) delete process.env.SKYHOOK_K8S;
  else process.env.SKYHOOK_K8S = before;
  return SMOKE_FILES;
}

export function newRunDir(): string {
  const base = join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'skyhook-ts-test-runs');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'run-'));
  writeFileSync(join(dir, 'owner'), String(process.pid));
  return dir;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const runDir = newRunDir();
  const evidence: RunEvidence[] = [];
  try {
    const newest = runJest({
      label: 'newest Kubernetes',
      suffix: '',
      config: 'jest.config.js',
      args,
      ...(args.length === 0 ? { expectedFiles: testFilesOnDisk('.') } : {}),
      runDir,
      outputFile: '.jest-results.json',
    });
    if (newest) evidence.push(newest);
    console.log(`\n[test:jest] the smoke subset against the oldest supported Kubernetes, ${oldestVersion()}`);
    const oldest = runJest({
      label: `oldest Kubernetes ${oldestVersion()}`,
      suffix: ` [Kubernetes ${oldestVersion()}]`,
      config: 'jest.oldest.config.js',
      args,
      ...(args.length === 0 ? { expectedFiles: (await smokeFiles()).length } : {}),
      optionalWhenFiltered: true,
      runDir,
      outputFile: '.jest-results-oldest.json',
    });
    if (oldest) evidence.push(oldest);
    else console.log('[test:jest] none of the given files is in the smoke subset');
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
  const { lines, ok } = render(combine(evidence.map(judgeRun)));
  writeFileSync(EVIDENCE_FILE, JSON.stringify({ runs: evidence, lines, ok }));
  console.log(`\n${lines.join('\n')}`);
  return ok ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await main());
