// `npm run test:jest` (the last step of `npm test`): the whole suite against the newest Kubernetes
// release, then the smoke subset (jest.oldest.config.js) against the oldest supported one. Both runs'
// results end up in .jest-results.json, the one file CI reads (scripts/test-summary.js); the smoke
// run's suites are marked with the release they ran on. Arguments (test paths, jest flags) go to
// both runs: a path outside the smoke subset runs only against the newest release.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const NEWEST = '.jest-results.json';
const OLDEST = '.jest-results-oldest.json';
const args = process.argv.slice(2);
const env = { ...process.env, NODE_OPTIONS: '--experimental-vm-modules --no-warnings=ExperimentalWarning' };

function jest(extra, outputFile) {
  rmSync(outputFile, { force: true });
  const jestBin = 'node_modules/jest/bin/jest.js';
  const run = spawnSync(process.execPath, [jestBin, '--json', `--outputFile=${outputFile}`, ...extra, ...args], {
    stdio: 'inherit',
    env,
  });
  return run.status ?? 1;
}

function oldestVersion() {
  const match = /^OLDEST_K8S_VERSION=(\S+)$/m.exec(readFileSync('tools/versions.env', 'utf8'));
  return match ? match[1] : 'oldest';
}

const KEYS = [
  'numFailedTestSuites',
  'numFailedTests',
  'numPassedTestSuites',
  'numPassedTests',
  'numPendingTestSuites',
  'numPendingTests',
  'numRuntimeErrorTestSuites',
  'numTodoTests',
  'numTotalTestSuites',
  'numTotalTests',
];

/** Adds the smoke run's counts and suites to the main result file, each suite marked with its release. */
function merge() {
  if (!existsSync(NEWEST) || !existsSync(OLDEST)) return;
  const all = JSON.parse(readFileSync(NEWEST, 'utf8'));
  const smoke = JSON.parse(readFileSync(OLDEST, 'utf8'));
  const label = ` [Kubernetes ${oldestVersion()}]`;
  for (const key of KEYS) all[key] = (all[key] ?? 0) + (smoke[key] ?? 0);
  all.success = Boolean(all.success && smoke.success);
  all.testResults = [
    ...(all.testResults ?? []),
    ...(smoke.testResults ?? []).map((suite) => ({ ...suite, name: `${suite.name}${label}` })),
  ];
  writeFileSync(NEWEST, JSON.stringify(all));
}

const newest = jest([], NEWEST);
console.log(`\n[test:jest] the smoke subset against the oldest supported Kubernetes, ${oldestVersion()}`);
const oldest = jest(['-c', 'jest.oldest.config.js', '--passWithNoTests'], OLDEST);
merge();
process.exit(newest !== 0 ? newest : oldest);
