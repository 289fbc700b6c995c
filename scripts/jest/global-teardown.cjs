// After the last test file (also after a failed or interrupted one): whatever a test or a killed
// worker left running is reaped, found through this run's directory only (scripts/test-reaper.ts).
// When jest itself is killed this does not run; scripts/test-jest.ts reaps after jest exits.
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

module.exports = async () => {
  const runDir = process.env.SKYHOOK_TEST_RUN_DIR;
  if (!runDir) return;
  const root = join(__dirname, '..', '..');
  // scripts/test-jest.ts reads the attempts log after jest exits, and removes the directory itself.
  const keep = process.env.SKYHOOK_TEST_RUN_KEEP === '1' ? ['--keep-dir'] : [];
  const reaper = spawnSync(
    process.execPath,
    ['--import', join(root, 'scripts/register-src-hook.ts'), join(root, 'scripts/test-reaper.ts'), runDir, ...keep],
    { stdio: 'inherit' },
  );
  if (reaper.status !== 0) console.error(`[teardown] the reaper exited with ${reaper.status ?? reaper.signal}`);
};
