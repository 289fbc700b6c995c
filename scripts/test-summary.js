// Prints the closing lines CI reads, ending with `N passed, N failed`, from the verdict
// scripts/test-jest.ts wrote (scripts/test-results.ts decides it), and exits non-zero unless the
// run is green. Plain JavaScript on purpose: .ci/run calls it even when `npm ci` failed.
import { existsSync, readFileSync } from 'node:fs';

const file = process.argv[2] ?? '.jest-evidence.json';
let verdict;
try {
  verdict = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
} catch {
  verdict = undefined;
}
if (!verdict || !Array.isArray(verdict.lines)) {
  console.log(
    `FAILED: the test run: no verdict in ${file}; npm ci, the build, the type check, lint or the cluster build failed before jest ran (see above)`,
  );
  console.log('0 passed, 1 failed');
  process.exit(1);
}
for (const line of verdict.lines) console.log(line);
process.exit(verdict.ok === true ? 0 : 1);
