/**
 * Real nodes pull package images from the sandbox's OCI registry (CNCF Distribution, TLS from the
 * sandbox's CA, basic auth) as an air-gapped cluster does: containerd on each node has it as the
 * mirror of ghcr.io, docker.io and registry.k8s.io, and the kubelet sends the credentials of the
 * stage Jobs' imagePullSecret (the operator's IMAGE_PULL_SECRET). The images pushed here are only
 * in the registry (never imported into the nodes), so a stage that runs proves a real pull; a
 * missing tag and wrong credentials each fail the stage with StageFailed naming the image and what
 * to fix, from the real kubelet's error; a package's own imagePullSecrets pull beside a wrong
 * operator-wide secret.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
      push: ['1.1.1', '1.1.2', '1.1.3'].map((tag) => ({ from: shellscript, as: `${REPO}:${tag}` })),
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
});
