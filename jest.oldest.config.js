// The smoke subset of the e2e suite that `npm test` runs against the oldest Kubernetes release the
// project supports (tools/versions.env: OLDEST_K8S_VERSION); the whole suite runs against the newest.
// Short on purpose (about 5 minutes on 2 cores): one file for each part of the API server and the
// node the operator relies on.
import base from './jest.config.js';

// Set before jest starts its workers, so every test file and every process it spawns (the operator,
// the CLI) finds the oldest release's binaries (src/sandbox/binaries.ts, tools/build-control-plane.sh).
process.env.SKYHOOK_K8S = 'oldest';

export const SMOKE_FILES = [
  'test/e2e/control-plane.test.ts', // the control plane itself: etcd, API server, controllers, kwok
  'test/e2e/api.test.ts', // the CRDs' schemas and CEL rules, as that API server evaluates them
  'test/e2e/admission-policy.test.ts', // the ValidatingAdmissionPolicy and its CEL
  'test/e2e/skyhook-lifecycle.test.ts', // a Skyhook's whole lifecycle: Jobs, pods, node patches, status
  'test/e2e/nodeop-drain.test.ts', // cordon and drain through the Eviction API with PDBs
  'test/e2e/real-demo.test.ts', // that release's kubelet on a real node (root on Linux; cgroup v1 here)
];

export default {
  ...base,
  displayName: 'oldest supported Kubernetes',
  testMatch: SMOKE_FILES.map((file) => `<rootDir>/${file}`),
};
