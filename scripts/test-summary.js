// Prints the closing line CI reads, `N passed, N failed`, from jest's JSON result, and exits
// non-zero when anything failed or no test ran at all.
import { existsSync, readFileSync } from 'node:fs';

const file = process.argv[2] ?? '.jest-results.json';
if (!existsSync(file)) {
  console.log('jest produced no result file: the type check or the control-plane build failed before any test ran');
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const result = JSON.parse(readFileSync(file, 'utf8'));
const passed = result.numPassedTests ?? 0;
const failed = (result.numFailedTests ?? 0) + (result.numRuntimeErrorTestSuites ?? 0);
const skipped = (result.numPendingTests ?? 0) + (result.numTodoTests ?? 0);
for (const suite of result.testResults ?? []) {
  if (suite.status !== 'passed')
    console.log(`FAILED suite: ${suite.name}${suite.message ? `\n${suite.message.slice(0, 4000)}` : ''}`);
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 || skipped > 0 ? 1 : 0);
