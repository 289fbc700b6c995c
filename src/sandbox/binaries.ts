/**
 * Where the control-plane binaries live: KUBEBUILDER_ASSETS when it holds a complete set (the
 * envtest convention), otherwise the versioned cache that `npm run cluster:build` fills. Two
 * Kubernetes releases are built and tested: the newest (the default) and the oldest the project
 * supports (SKYHOOK_K8S=oldest, for the smoke subset of the e2e tests).
 */
import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BINARY_NAMES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'kwok',
] as const;
export type BinaryName = (typeof BINARY_NAMES)[number];
export type Binaries = Record<BinaryName, string>;

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');

export interface ControlPlaneVersions {
  k8s: string;
  etcd: string;
  kwok: string;
}

/** Which supported Kubernetes release a run uses: the newest, or the oldest we claim to support. */
export type K8sRelease = 'newest' | 'oldest';

/** SKYHOOK_K8S selects the release (`newest` when unset); tools/build-control-plane.sh reads it too. */
export function k8sRelease(env: NodeJS.ProcessEnv = process.env): K8sRelease {
  const value = env.SKYHOOK_K8S;
  if (value === undefined || value === '' || value === 'newest') return 'newest';
  if (value === 'oldest') return 'oldest';
  throw new Error(`SKYHOOK_K8S=${value}: expected newest (the default) or oldest`);
}

const VERSIONS_FILE = join(repoRoot, 'tools/versions.env');

/** tools/versions.env as KEY -> value. */
function versionVars(file: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^([A-Z0-9_]+)=(\S+)$/.exec(line.trim());
    if (match) vars.set(match[1]!, match[2]!);
  }
  return vars;
}

/**
 * Reads tools/versions.env, the single place the versions are written down: K8S_VERSION and
 * ETCD_VERSION for the newest release, OLDEST_K8S_VERSION and OLDEST_ETCD_VERSION for the oldest.
 */
export function readVersions(release: K8sRelease = k8sRelease(), file = VERSIONS_FILE): ControlPlaneVersions {
  const vars = versionVars(file);
  const get = (key: string): string => {
    const value = vars.get(key);
    if (!value) throw new Error(`${file} does not define ${key}`);
    return value;
  };
  const prefix = release === 'oldest' ? 'OLDEST_' : '';
  return { k8s: get(`${prefix}K8S_VERSION`), etcd: get(`${prefix}ETCD_VERSION`), kwok: get('KWOK_VERSION') };
}

/** Where everything built outside the repository is cached (binaries, root filesystems, images). */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.SKYHOOK_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'skyhook-ts');
}

export function cacheBinDir(versions = readVersions(), env: NodeJS.ProcessEnv = process.env): string {
  // The key format is shared with tools/build-control-plane.sh.
  return join(cacheRoot(env), 'bin', `k8s-${versions.k8s}-etcd-${versions.etcd}-kwok-${versions.kwok}`);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function completeSet(dir: string): Binaries | undefined {
  const entries = BINARY_NAMES.map((name) => [name, join(dir, name)] as const);
  return entries.every(([, path]) => isExecutable(path)) ? (Object.fromEntries(entries) as Binaries) : undefined;
}

/** The npm script that builds a release's binaries. */
function buildCommand(release: K8sRelease): string {
  return release === 'oldest' ? 'npm run cluster:build:oldest' : 'npm run cluster:build';
}

/** The kubelet of the sandbox's real nodes, built with the control plane (it is not part of an envtest set). */
export function findKubelet(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [env.KUBEBUILDER_ASSETS, cacheBinDir(readVersions(k8sRelease(env)), env)]
    .filter((d): d is string => Boolean(d))
    .map((d) => join(d, 'kubelet'));
  const found = candidates.find(isExecutable);
  if (found) return found;
  throw new Error(
    `kubelet not found (looked at ${candidates.join(', ')}). Run \`${buildCommand(k8sRelease(env))}\` to build it with the control plane.`,
  );
}

/** Finds a complete set of binaries or throws an error that says how to get one. */
export function findBinaries(env: NodeJS.ProcessEnv = process.env): Binaries {
  const assets = env.KUBEBUILDER_ASSETS;
  if (assets) {
    const fromAssets = completeSet(assets);
    if (fromAssets) return fromAssets;
  }
  const release = k8sRelease(env);
  const dir = cacheBinDir(readVersions(release), env);
  const cached = completeSet(dir);
  if (cached) return cached;
  throw new Error(
    `control-plane binaries not found (${BINARY_NAMES.join(', ')}). ` +
      `Run \`${buildCommand(release)}\` to build them into ${dir}, ` +
      `or set KUBEBUILDER_ASSETS to a directory that holds all of them.`,
  );
}

/**
 * The sandbox's OCI registry (CNCF Distribution): SKYHOOK_REGISTRY_BIN when set, otherwise the
 * binary `tools/build-registry.sh` builds into the cache under its own version key.
 */
export function findRegistryBinary(env: NodeJS.ProcessEnv = process.env, file = VERSIONS_FILE): string {
  const fromEnv = env.SKYHOOK_REGISTRY_BIN;
  if (fromEnv && isExecutable(fromEnv)) return fromEnv;
  const version = versionVars(file).get('REGISTRY_VERSION');
  if (!version) throw new Error(`${file} does not define REGISTRY_VERSION`);
  const path = join(cacheRoot(env), 'bin', `registry-${version}`, 'registry');
  if (isExecutable(path)) return path;
  throw new Error(
    `the sandbox registry (${path}) is not built. Run \`bash tools/build-registry.sh\` (npm run cluster:build does it) ` +
      'or set SKYHOOK_REGISTRY_BIN to a CNCF Distribution `registry` binary.',
  );
}
