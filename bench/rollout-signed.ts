/**
 * What `rollout-1000-signed` adds to the rollout benchmark (rollout.ts): the package image lives in a
 * local registry, signed by cosign with a key made for the run (signed-registry.ts); the operator
 * gets the registry's CA (REGISTRY_CA_FILE) and a pull secret (IMAGE_PULL_SECRET) as in a cluster;
 * a PackageTrustPolicy in Enforce mode trusts that key for the image's prefix. The figure is the
 * registry requests the operator made during the rollout, per package version and per node: the
 * promise is one verification per package version, however many nodes run it, so the per-node
 * figure is about 0. A run whose requests grow with the nodes fails loudly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_GROUP, API_VERSION, GROUP_VERSION, KINDS } from '../src/api/names.js';
import type { PackageTrustPolicy } from '../src/api/package-trust-policy.js';
import type { Package } from '../src/api/skyhook.js';
import { getJson, waitForList } from '../src/kube/wait.js';
import type { ControlPlane } from '../src/sandbox/control-plane.js';
import { NAMESPACE } from '../test/e2e/skyhook-cluster.js';
import { say } from './bench-cluster.js';
import { brokenPromise, type RegistryRequest, requestFigures } from './registry-requests.js';
import { type SignedRegistry, startSignedRegistry } from './signed-registry.js';
import { summarize } from './stats.js';

const PULL_SECRET = 'bench-registry';
const POLICY = 'bench-signed';
/** Cold verifications the bench times itself afterwards (the operator's verifier, the same registry). */
const LATENCY_SAMPLES = 5;

export interface SignedRollout {
  /** The operator's settings env: the registry's CA and the pull secret's name. */
  operatorSettings: Record<string, string>;
  /** The rollout's package, its image in the registry. */
  pkg(base: Package): Package;
  /** The pull secret and the policy, created with kubectl; resolves once the operator reports the policy Ready. */
  install(cp: ControlPlane): Promise<void>;
  /** Marks the access log: requests from here on are the rollout's. */
  startCounting(): void;
  /** The figures, after the rollout; throws if the requests grew with the nodes. */
  report(cp: ControlPlane, nodes: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startSignedRollout(version: string): Promise<SignedRollout> {
  const dir = mkdtempSync(join(tmpdir(), 'skyhook-bench-signed-'));
  let registry: SignedRegistry;
  try {
    registry = await startSignedRegistry(dir, version);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  say(`signed package ${registry.image}:${version} (${registry.digest}) in the bench's registry`);
  let mark = 0;
  return {
    operatorSettings: { REGISTRY_CA_FILE: registry.caFile, IMAGE_PULL_SECRET: PULL_SECRET },
    pkg: (base) => ({ ...base, version, image: registry.image }),
    install: (cp) => install(cp, registry),
    startCounting: () => {
      mark = registry.mark();
    },
    report: (cp, nodes) => signedReport(cp, registry, registry.requestsSince(mark), nodes, version),
    stop: async () => {
      await registry.stop();
      if (process.env['BENCH_KEEP_RUN_DIR'] === '1') say(`signed registry's directory kept: ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function install(cp: ControlPlane, registry: SignedRegistry): Promise<void> {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: PULL_SECRET, namespace: NAMESPACE },
    type: 'kubernetes.io/dockerconfigjson',
    stringData: { '.dockerconfigjson': registry.dockerConfigJson },
  };
  const policy = {
    apiVersion: GROUP_VERSION,
    kind: KINDS.packageTrustPolicy.kind,
    metadata: { name: POLICY },
    spec: {
      mode: 'Enforce',
      keys: [{ name: 'bench', publicKey: registry.publicKey }],
      images: [{ prefix: registry.prefix, keys: ['bench'] }],
    },
  };
  // kubectl, as the Skyhooks are created: its writes are not counted as the operator's.
  const created = await cp.kubectl(['create', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [secret, policy] }),
  });
  if (created.code !== 0)
    throw new Error(`creating the pull secret and the PackageTrustPolicy failed: ${created.stderr}`);
  // Ready is written from the informer the Skyhook controller reads policies from: once it is, no
  // Skyhook created after can be planned without the policy.
  await waitForList<PackageTrustPolicy>(
    cp.kubeConfig,
    `/apis/${API_GROUP}/${API_VERSION}/${KINDS.packageTrustPolicy.plural}`,
    (all) =>
      all.some(
        (p) =>
          p.metadata.name === POLICY &&
          p.status?.observedGeneration === p.metadata.generation &&
          p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
      ),
    60_000,
    `PackageTrustPolicy ${POLICY} Ready (the operator has loaded it)`,
  );
}

/** The stage Jobs' package image, from the first few Jobs still there: pinned to the signed digest? */
async function pinnedToDigest(cp: ControlPlane, registry: SignedRegistry): Promise<boolean | undefined> {
  type Job = { spec?: { template?: { spec?: { initContainers?: { name: string; image?: string }[] } } } };
  const { items } = await getJson<{ items: Job[] }>(
    cp.kubeConfig,
    `/apis/batch/v1/namespaces/${NAMESPACE}/jobs?limit=5`,
  );
  const images = items.map(
    (job) => job.spec?.template?.spec?.initContainers?.find((c) => c.name === 'pkg-init')?.image,
  );
  if (images.length === 0) return undefined;
  return images.every((image) => image === `${registry.image}@${registry.digest}`);
}

async function signedReport(
  cp: ControlPlane,
  registry: SignedRegistry,
  requests: readonly RegistryRequest[],
  nodes: number,
  version: string,
): Promise<Record<string, unknown>> {
  // One Skyhook of one package: one package version, whatever the node count.
  const figures = {
    signedPackage: { image: `${registry.image}:${version}`, digest: registry.digest, policyMode: 'Enforce' },
    ...requestFigures(requests, nodes, 1),
    stageJobsPinnedToDigest: await pinnedToDigest(cp, registry),
  };
  const broken = brokenPromise(figures);
  if (broken !== undefined) throw new Error(`rollout-1000-signed: ${broken}: ${JSON.stringify(figures)}`);
  if (figures.stageJobsPinnedToDigest === false)
    throw new Error(`rollout-1000-signed: stage Jobs do not run the verified digest ${registry.digest}`);
  // After the count: the bench's own verifications land in the same access log.
  const latency = await registry.verifyLatency(version, LATENCY_SAMPLES);
  return {
    signing: {
      ...figures,
      verificationLatencyMs: {
        ...summarize(latency.ms),
        requestsEach: latency.requests,
        how: `${LATENCY_SAMPLES} verifications of the same image by the operator's verifier in the bench process, each on a new connection, after the rollout`,
      },
    },
  };
}
