/**
 * Real nodes pull package images from the sandbox's OCI registry (CNCF Distribution, TLS from the
 * sandbox's CA, basic auth) as an air-gapped cluster does: containerd on each node has it as the
 * mirror of ghcr.io, docker.io and registry.k8s.io, and the kubelet sends the credentials of the
 * stage Jobs' imagePullSecret (the operator's IMAGE_PULL_SECRET). The images pushed here are only
 * in the registry (never imported into the nodes), so a stage that runs proves a real pull; a
 * missing tag and wrong credentials each fail the stage with StageFailed naming the image and what
 * to fix, from the real kubelet's error; a package's own imagePullSecrets pull beside a wrong
 * operator-wide secret. Signed runs: with a PackageTrustPolicy (Enforce) and the operator given
 * REGISTRY_MIRRORS and REGISTRY_CA_FILE, a package signed by the real cosign runs on the real node
 * pinned to the signed digest (the kubelet pulls that digest, new to the node, and reports it), and an
 * unsigned one is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BatchV1Api } from '@kubernetes/client-node';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Skyhook } from '../../src/api/skyhook.js';
import { CLASSIC_FORMAT, cosignOk } from '../cosign-binary.js';
import { createTrustPolicy } from '../fixtures/trust-policy.js';
import {
  createGroupSkyhook,
  GROUP_LABEL,
  kubectlOk,
  NAMESPACE,
  startRealHarness,
  waitForSkyhook,
  type RealHarness,
  stageFailed,
} from './real-harness.js';

const NODE = 'real-0';
const GROUP = 'registry';
const REPO = 'ghcr.io/skyhook-ts/private/shellscript';
/** What is pushed as the signed tag: an image of the set that no other case of this file runs. */
const SIGNED_CONTENT = 'ghcr.io/nvidia/skyhook-packages/shellscript:1.1.1';
const credentials = { username: 'skyhook-e2e', password: 'pull-me-please' };
/** The operator-wide IMAGE_PULL_SECRET of this file's operator. */
const OPERATOR_SECRET = 'registry-pull';
let h: RealHarness;

/** A kubernetes.io/dockerconfigjson Secret for ghcr.io (the registry the images are named by). */
async function applyPullSecret(name: string, password: string): Promise<void> {
  const auth = Buffer.from(`${credentials.username}:${password}`).toString('base64');
  const config = JSON.stringify({ auths: { 'ghcr.io': { username: credentials.username, password, auth } } });
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NAMESPACE },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(config).toString('base64') },
  };
  await kubectlOk(h, ['apply', '-f', '-'], JSON.stringify(secret));
}

beforeAll(async () => {
  const shellscript = 'ghcr.io/skyhook-ts/packages/shellscript:1.1.1';
  h = await startRealHarness({
    realNodes: 1,
    realNodeLabels: { [GROUP_LABEL]: GROUP },
    registry: {
      credentials,
      push: [
        ...['1.1.1', '1.1.2', '1.1.3'].map((tag) => ({ from: shellscript, as: `${REPO}:${tag}` })),
        // The signed one has content of its own (NVIDIA's shellscript, not our stand-in), so the node
        // has never pulled its digest: the signed run proves a fresh pull of exactly that digest.
        { from: SIGNED_CONTENT, as: `${REPO}:1.2.0` },
        // Another image (another digest): never signed, so the trust policy refuses it.
        { from: 'docker.io/library/busybox:1.37', as: `${REPO}:1.2.1` },
      ],
    },
    skyhook: { settings: { imagePullSecret: OPERATOR_SECRET } },
    nodeOpSettings: { stuckPodTimeoutMs: 20_000 },
  });
  await applyPullSecret(OPERATOR_SECRET, credentials.password);
}, 400_000);

afterAll(async () => {
  await h?.stop();
}, 120_000);

async function deleteSkyhook(name: string): Promise<void> {
  await h.custom.deleteClusterCustomObject({
    group: 'skyhook.nvidia.com',
    version: 'v1alpha1',
    plural: 'skyhooks',
    name,
  });
}

function registryLog(): string {
  return readFileSync(join(h.cp.runDir, 'logs', 'registry.log'), 'utf8');
}

describe('package images from the sandbox registry', () => {
  it('pulls a stage image through the mirror with the operator-wide pull secret and runs the stage', async () => {
    expect(await h.node(NODE).exec(['ctr', '-n', 'k8s.io', 'images', 'ls', '-q'])).not.toContain(`${REPO}:1.1.1`);
    const started = performance.now();
    await createGroupSkyhook(h, 'pulled', GROUP, { packages: { pkg: { version: '1.1.1', image: REPO } } });
    const done = await waitForSkyhook(h, 'pulled', (s) => s.status?.status === 'complete', 300_000);
    console.log(
      `a package pulled through the registry completed in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(done.status?.nodeStatus?.[NODE]).toBe('complete');
    expect(await h.node(NODE).exec(['ctr', '-n', 'k8s.io', 'images', 'ls', '-q'])).toContain(`${REPO}:1.1.1`);
    // containerd asked the sandbox registry, as the mirror of ghcr.io, with the secret's user.
    const served = registryLog()
      .split('\n')
      .filter(
        (line) =>
          line.includes('/v2/skyhook-ts/private/shellscript/manifests/1.1.1') && /response completed/.test(line),
      );
    expect(served.some((line) => line.includes('ns=ghcr.io') && /auth\.user\.name="?skyhook-e2e/.test(line))).toBe(
      true,
    );
    await deleteSkyhook('pulled');
  }, 400_000);

  it('fails the stage on a missing tag, naming the image and saying to check the tag', async () => {
    await createGroupSkyhook(h, 'missing-tag', GROUP, { packages: { pkg: { version: '9.9.9', image: REPO } } });
    const event = await stageFailed(h, 'missing-tag');
    expect(event.message).toContain(`Package [pkg:9.9.9] stage [apply] failed on node [${NODE}]`);
    expect(event.message).toMatch(/ErrImagePull|ImagePullBackOff/);
    expect(event.message).toContain(`${REPO}:9.9.9`);
    expect(event.message).toMatch(/not found/);
    expect(event.message).toContain('check that the image exists at that tag or digest');
    expect(event.message).not.toContain("check the pull secret's credentials");
    await deleteSkyhook('missing-tag');
  }, 400_000);

  it("fails the stage on wrong credentials, naming the image and saying to check the pull secret's credentials", async () => {
    await applyPullSecret(OPERATOR_SECRET, 'not-the-password');
    await createGroupSkyhook(h, 'bad-creds', GROUP, { packages: { pkg: { version: '1.1.3', image: REPO } } });
    const event = await stageFailed(h, 'bad-creds');
    expect(event.message).toContain(`Package [pkg:1.1.3] stage [apply] failed on node [${NODE}]`);
    expect(event.message).toMatch(/ErrImagePull|ImagePullBackOff/);
    expect(event.message).toContain(`${REPO}:1.1.3`);
    expect(event.message).toMatch(/401 Unauthorized|unauthorized|authorization failed/i);
    expect(event.message).toContain("check the pull secret's credentials");
    await deleteSkyhook('bad-creds');
  }, 400_000);

  it("pulls with the package's own pull secret beside a wrong operator-wide one", async () => {
    // The previous test left IMAGE_PULL_SECRET's credentials wrong: only the package's secret can pull.
    await applyPullSecret('team-pull', credentials.password);
    const pkg = { version: '1.1.2', image: REPO, imagePullSecrets: [{ name: 'team-pull' }] };
    await createGroupSkyhook(h, 'own-secret', GROUP, { packages: { pkg } });
    const done = await waitForSkyhook(h, 'own-secret', (s) => s.status?.status === 'complete', 300_000);
    expect(done.status?.nodeStatus?.[NODE]).toBe('complete');
    expect(await h.node(NODE).exec(['ctr', '-n', 'k8s.io', 'images', 'ls', '-q'])).toContain(`${REPO}:1.1.2`);
    await deleteSkyhook('own-secret');
  }, 400_000);

  it('runs a package signed by the real cosign under an Enforce policy, pinned to the signed digest, and refuses an unsigned one', async () => {
    const registry = h.registry!;
    const work = mkdtempSync(join(tmpdir(), 'skyhook-real-trust-'));
    mkdirSync(join(work, 'docker'));
    const env = {
      COSIGN_PASSWORD: 'key-password',
      DOCKER_CONFIG: join(work, 'docker'),
      HOME: work,
      SSL_CERT_FILE: registry.caCert,
    };
    const saved = { mirrors: process.env['REGISTRY_MIRRORS'], ca: process.env['REGISTRY_CA_FILE'] };
    try {
      // The package author: a key pair, and the image signed in cosign's classic `.sig` format, offline.
      await cosignOk(['login', registry.host, '-u', credentials.username, '-p', credentials.password], env, work);
      await cosignOk(['generate-key-pair', '--output-key-prefix', 'release'], env, work);
      const signedRef = `${registry.host}/skyhook-ts/private/shellscript:1.2.0`;
      await cosignOk(['sign', '--key', 'release.key', '--yes', ...CLASSIC_FORMAT, signedRef], env, work);
      // The digest the signature covers, as the real cosign verifies it.
      const payloads = JSON.parse(
        await cosignOk(['verify', '--key', 'release.pub', '--insecure-ignore-tlog=true', signedRef], env, work),
      ) as Array<{ critical: { image: { 'docker-manifest-digest': string } } }>;
      const digest = payloads[0]!.critical.image['docker-manifest-digest'];
      expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);

      // The operator verifies as the node pulls: ghcr.io through the sandbox registry, trusting its CA.
      await applyPullSecret(OPERATOR_SECRET, credentials.password);
      process.env['REGISTRY_MIRRORS'] = `ghcr.io=https://${registry.host}`;
      process.env['REGISTRY_CA_FILE'] = registry.caCert;
      await h.stopOperator();
      await h.startOperator();
      await createTrustPolicy(h.custom, {
        name: 'real-trust',
        mode: 'Enforce',
        publicKey: readFileSync(join(work, 'release.pub'), 'utf8'),
        prefix: 'ghcr.io/skyhook-ts/private/',
      });

      // Nothing on the node has that digest yet: whatever runs it must pull it.
      expect(await h.node(NODE).exec(['ctr', '-n', 'k8s.io', 'images', 'ls'])).not.toContain(digest);
      await createGroupSkyhook(h, 'signed', GROUP, { packages: { pkg: { version: '1.2.0', image: REPO } } });
      const done = await waitForSkyhook(h, 'signed', (s) => s.status?.status === 'complete', 300_000);
      expect(done.status?.nodeStatus?.[NODE]).toBe('complete');
      const pinned = `${REPO}@${digest}`;
      const jobs = await h.cp.kubeConfig
        .makeApiClient(BatchV1Api)
        .listNamespacedJob({ namespace: NAMESPACE, labelSelector: 'skyhook.nvidia.com/name=signed' });
      // Every stage Job's package container names the digest, never the tag the Skyhook gave.
      const packageImages = jobs.items.flatMap((job) =>
        [...(job.spec?.template.spec?.initContainers ?? []), ...(job.spec?.template.spec?.containers ?? [])]
          .map((c) => c.image ?? '')
          .filter((image) => image.startsWith(REPO)),
      );
      expect(packageImages.length).toBeGreaterThan(0);
      expect(new Set(packageImages)).toEqual(new Set([pinned]));
      expect(jobs.items.every((job) => job.status?.succeeded === 1)).toBe(true);
      // The real kubelet ran that digest: the statuses of the Jobs' pods' package containers name it.
      const jobNames = new Set(jobs.items.map((job) => job.metadata?.name));
      const pods = (await h.core.listNamespacedPod({ namespace: NAMESPACE })).items.filter((pod) =>
        pod.metadata?.ownerReferences?.some((o) => o.kind === 'Job' && jobNames.has(o.name)),
      );
      const ran = pods.flatMap((pod) => {
        const packageContainers = new Set(
          (pod.spec?.initContainers ?? []).filter((c) => c.image === pinned).map((c) => c.name),
        );
        return (pod.status?.initContainerStatuses ?? []).filter((status) => packageContainers.has(status.name));
      });
      console.log(
        `stage pods' package containers: ${JSON.stringify(ran.map(({ name, image, imageID }) => ({ name, image, imageID })))}`,
      );
      expect(ran.length).toBeGreaterThan(0);
      for (const status of ran) {
        expect(status.imageID).toBe(pinned);
        expect(status.state?.terminated?.exitCode).toBe(0);
      }
      // The real kubelet pulled the pinned digest itself, through the mirror.
      const pulled = (
        await h.core.listNamespacedEvent({ namespace: NAMESPACE, fieldSelector: 'reason=Pulled' })
      ).items.map((event) => event.message ?? '');
      expect(pulled.some((message) => message.startsWith(`Successfully pulled image "${pinned}"`))).toBe(true);
      expect(await h.node(NODE).exec(['ctr', '-n', 'k8s.io', 'images', 'ls'])).toContain(digest);
      await deleteSkyhook('signed');

      // The same policy refuses an image nobody signed: no stage Job.
      await createGroupSkyhook(h, 'unsigned', GROUP, { packages: { pkg: { version: '1.2.1', image: REPO } } });
      const refused = await waitForSkyhook(
        h,
        'unsigned',
        (s: Skyhook) =>
          s.status?.conditions?.some((c) => c.type === 'PackageTrustRefused' && c.reason === 'Unsigned') === true,
      );
      expect(refused.status?.conditions?.find((c) => c.type === 'PackageTrustRefused')?.message).toContain(
        `package pkg:1.2.1 (image ${REPO}:1.2.1) refused by PackageTrustPolicy real-trust: Unsigned`,
      );
      const unsignedJobs = await h.cp.kubeConfig
        .makeApiClient(BatchV1Api)
        .listNamespacedJob({ namespace: NAMESPACE, labelSelector: 'skyhook.nvidia.com/name=unsigned' });
      expect(unsignedJobs.items).toEqual([]);
      await deleteSkyhook('unsigned');
    } finally {
      restoreEnv('REGISTRY_MIRRORS', saved.mirrors);
      restoreEnv('REGISTRY_CA_FILE', saved.ca);
      rmSync(work, { recursive: true, force: true });
    }
  }, 400_000);
});

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
