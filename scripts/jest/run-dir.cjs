// The run directory: one per test run, named in SKYHOOK_TEST_RUN_DIR for every worker and every
// process the tests start. Control planes started during the run put their own run directories
// under `sandboxes/` (SKYHOOK_SANDBOX_BASE, src/sandbox/control-plane.ts), the test environment
// appends each file start to `attempts` (worker pid, file), so the reaper
// (scripts/test-reaper.ts) finds everything the run started by looking in this directory only.
const { existsSync, mkdirSync, mkdtempSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

function runsBase() {
  return join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'skyhook-ts-test-runs');
}

/** Creates the run directory unless the environment names one already (scripts/test-jest.ts does). */
function ensureRunDir() {
  let dir = process.env.SKYHOOK_TEST_RUN_DIR;
  // A directory the caller named is the caller's to remove (scripts/test-jest.ts reads it after jest).
  if (dir) process.env.SKYHOOK_TEST_RUN_KEEP = '1';
  else {
    mkdirSync(runsBase(), { recursive: true });
    dir = mkdtempSync(join(runsBase(), 'run-'));
    writeFileSync(join(dir, 'owner'), String(process.pid));
    process.env.SKYHOOK_TEST_RUN_DIR = dir;
  }
  mkdirSync(join(dir, 'sandboxes'), { recursive: true });
  process.env.SKYHOOK_SANDBOX_BASE = join(dir, 'sandboxes');
  return dir;
}

module.exports = { ensureRunDir, runsBase };
