// The test environment of every jest run: jest's node environment, plus one line per test file
// start in the run directory (scripts/jest/run-dir.cjs): `<worker pid>\t<test path>` in `attempts`.
// A file started twice in one run was re-run by jest after its worker exited (jest-worker retries a
// crashed worker's file); scripts/test-results.ts reports it as failed. The pids are also the
// owners the reaper (scripts/test-reaper.ts) looks for when a worker died holding real nodes.
const { appendFileSync } = require('node:fs');
const { join } = require('node:path');
const NodeEnvironment = require('jest-environment-node').TestEnvironment;

class RecordingEnvironment extends NodeEnvironment {
  constructor(config, context) {
    super(config, context);
    const runDir = process.env.SKYHOOK_TEST_RUN_DIR;
    if (runDir) appendFileSync(join(runDir, 'attempts'), `${process.pid}\t${context.testPath}\n`);
  }
}

module.exports = RecordingEnvironment;
