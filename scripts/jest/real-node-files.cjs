// The test files that start real nodes (kubelet + containerd on this machine, as root). They run one
// at a time, machine-wide (scripts/jest/runner.cjs): each holds root filesystems, kubelets and
// network namespaces, and two at once overload a 2-core machine. Matched by name, so a new
// test/e2e/real-*.test.ts joins the serial lane without a list to update.
// The runner's own tests (test/unit/scripts/runner-lane.test.ts) name fixture files and a private
// lock through the environment, so they never contend with a real run's lock.
const REAL_NODE_FILE = process.env.SKYHOOK_REAL_NODE_FILE_PATTERN
  ? new RegExp(process.env.SKYHOOK_REAL_NODE_FILE_PATTERN)
  : /[\\/]test[\\/]e2e[\\/](real-[^\\/]*|helm|images)\.test\.ts$/;

/** The machine-wide lock's directory; its `owner` file holds the holding process's pid. */
const REAL_NODE_LOCK_DIR = process.env.SKYHOOK_REAL_NODE_LOCK_DIR || '/run/skyhook-ts-real-e2e.lock';

module.exports = { REAL_NODE_FILE, REAL_NODE_LOCK_DIR };
