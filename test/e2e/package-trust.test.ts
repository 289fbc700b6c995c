/**
 * PackageTrustPolicies end to end: the sandbox's real registry (Distribution, TLS from the sandbox CA,
 * basic auth), images signed by the real cosign, the operator's real verifier (counted, not replaced),
 * on a real control plane with simulated nodes. A signed package runs with its stage Jobs pinned to
 * the verified digest, verified once for all its nodes; an unsigned one, one signed by another key, and
 * one whose tag was re-pointed after signing are refused (condition, Event, no Job); in Warn mode an
 * unsigned one runs with a Warning Event. The pull secret the stage pods use is what logs the verifier in.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BatchV1Api, type CoreV1Event, type V1Job } from '@kubernetes/client-node';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_GROUP, API_VERSION, KINDS } from '../../src/api/names.js';
import type { Skyhook } from '../../src/api/skyhook.js';
import { createPki } from '../../src/sandbox/pki.js';
import { startRegistry, type SandboxRegistry } from '../../src/sandbox/registry/registry.js';
import type { VerifyImageSignature } from '../../src/signing/verdict.js';
import { verifyImageSignature } from '../../src/signing/verify.js';
import { CLASSIC_FORMAT, cosignOk } from '../cosign-binary.js';
import { trustPolicyControllerFactory } from '../../src/controllers/trust/trust-wiring.js';
import { waitForList } from '../../src/kube/wait.js';
import { OCI_MANIFEST, OciPusher } from './oci-push.js';
import { createTrustPolicy } from '../fixtures/trust-policy.js';
import {
  createGroupSkyhook,
  groupNodes,
  NAMESPACE,
  startSkyhookHarness,
  type SkyhookHarness,
  waitForSkyhook,
} from './skyhook-harness.js';

const canRun = process.platform === 'linux';
const credentials = { username: 'signer', password: 'registry-secret' };
const COSIGN_PASSWORD = 'key-password';
const PULL_SECRET = 'registry-pull';

let runDir: string;
let work: string;
let registry: SandboxRegistry;
let pusher: OciPusher;
let h: SkyhookHarness;
/** Every image the operator's verifier was asked about, in order. */
const verified: string[] = [];

const cosignEnv = (): Record<string, string> => ({
  COSIGN_PASSWORD,
  DOCKER_CONFIG: join(work, 'docker'),
  HOME: work,
  SSL_CERT_FILE: registry.caCert,
});
const sign = (ref: string, key: string): Promise<unknown> =>
  cosignOk(['sign', '--key', `${key}.key`, '--yes', ...CLASSIC_FORMAT, ref], cosignEnv(), work);

const createPolicy = (name: string, mode: 'Enforce' | 'Warn', prefix: string): Promise<void> =>
  createTrustPolicy(h.custom, { name, mode, prefix, publicKey: readFileSync(join(work, 'release.pub'), 'utf8') });

/** A Skyhook of one package `<repository>:1.0` on the group's nodes. */
async function skyhookOf(name: string, repository: string): Promise<void> {
  await createGroupSkyhook(h, name, name, {
    packages: { pkg: { version: '1.0', image: `${registry.host}/${repository}` } },
  });
}

async function stageJobs(skyhook: string): Promise<V1Job[]> {
  const jobs = await h.cp.kubeConfig
    .makeApiClient(BatchV1Api)
    .listNamespacedJob({ namespace: NAMESPACE, labelSelector: `skyhook.nvidia.com/name=${skyhook}` });
  return jobs.items;
}

const packageImage = (job: V1Job): string | undefined =>
  job.spec?.template.spec?.initContainers?.find((c) => c.name === 'pkg-init')?.image;

async function eventOn(skyhook: string, reason: string): Promise<CoreV1Event> {
  const match = (e: CoreV1Event): boolean =>
    e.involvedObject.kind === 'Skyhook' && e.involvedObject.name === skyhook && e.reason === reason;
  const events = await waitForList<CoreV1Event>(
    h.cp.kubeConfig,
    '/api/v1/events',
    (all) => all.some(match),
    90_000,
    `${reason} Event on ${skyhook}`,
  );
  return events.find(match)!;
}

const refusedWith = (reason: string) => (scr: Skyhook) =>
  scr.status?.conditions?.some((c) => c.type === 'PackageTrustRefused' && c.reason === reason) === true;

/** Refused: the condition names package, image and reason, an Event says so with the fix, and no stage ran. */
async function expectRefused(skyhook: string, repository: string, reason: string): Promise<void> {
  const scr = await waitForSkyhook(h, skyhook, refusedWith(reason));
  const condition = scr.status!.conditions!.find((c) => c.type === 'PackageTrustRefused')!;
  expect(condition.message).toContain(
    `package pkg:1.0 (image ${registry.host}/${repository}:1.0) refused by PackageTrustPolicy trusted: ${reason}`,
  );
  expect(scr.status?.status).toBe('blocked');
  const event = await eventOn(skyhook, 'PackageTrustRefused');
  expect(event.type).toBe('Warning');
  expect(event.message).toContain(`package pkg:1.0 (image ${registry.host}/${repository}:1.0)`);
  expect(event.message).toContain('No stage of this Skyhook starts until the image is signed');
  // The status above was written by the pass that decided; no pass creates a stage op while refused.
  const ops = (await h.custom.listNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.nodeOp.plural,
    namespace: NAMESPACE,
    labelSelector: `skyhook.nvidia.com/name=${skyhook}`,
  })) as { items: unknown[] };
  expect(ops.items).toEqual([]);
  expect(await stageJobs(skyhook)).toEqual([]);
}

(canRun ? describe : describe.skip)('PackageTrustPolicy with the real registry, cosign and verifier', () => {
  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'skyhook-trust-'));
    work = join(runDir, 'work');
    mkdirSync(join(work, 'docker'), { recursive: true });
    const pki = await createPki(runDir);
    registry = await startRegistry({ runDir, pki, credentials });
    const caPem = readFileSync(registry.caCert, 'utf8');
    pusher = new OciPusher(registry.host, credentials, caPem);
    await cosignOk(['login', registry.host, '-u', credentials.username, '-p', credentials.password], cosignEnv(), work);
    await cosignOk(['generate-key-pair', '--output-key-prefix', 'release'], cosignEnv(), work);
    await cosignOk(['generate-key-pair', '--output-key-prefix', 'stranger'], cosignEnv(), work);
    const verify: VerifyImageSignature = (image, keys, access) => {
      verified.push(image);
      return verifyImageSignature(image, keys, access);
    };
    const nodes = ['signed', 'unsigned', 'foreign', 'moved', 'warned'].flatMap((group) => groupNodes(group, 3));
    h = await startSkyhookHarness(nodes, {
      skyhook: { verify, registry: { mirrors: {}, caPem }, settings: { imagePullSecret: PULL_SECRET } },
      extraControllers: [trustPolicyControllerFactory()],
    });
    const auth = Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64');
    await h.core.createNamespacedSecret({
      namespace: NAMESPACE,
      body: {
        metadata: { name: PULL_SECRET },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [registry.host]: { auth } } }) },
      },
    });
    await createPolicy('trusted', 'Enforce', `${registry.host}/trusted/`);
    await createPolicy('warned', 'Warn', `${registry.host}/warned/`);
  }, 6 * 60_000);

  afterAll(async () => {
    await h?.stop();
    await pusher?.close();
    await registry?.stop();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });

  it('runs a signed package on every node with the verified digest pinned, verified once for all nodes', async () => {
    const digest = await pusher.image('trusted/signed', '1.0', 'the reviewed build');
    await sign(`${registry.host}/trusted/signed:1.0`, 'release');
    await skyhookOf('signed', 'trusted/signed');
    await waitForSkyhook(h, 'signed', (scr) => scr.status?.status === 'complete', 120_000);
    const jobs = await stageJobs('signed');
    expect(new Set(jobs.map((job) => job.spec?.template.spec?.nodeName)).size).toBe(3);
    for (const job of jobs) expect(packageImage(job)).toBe(`${registry.host}/trusted/signed@${digest}`);
    expect(verified.filter((image) => image === `${registry.host}/trusted/signed:1.0`)).toHaveLength(1);
    const event = await eventOn('signed', 'PackageTrustVerified');
    expect(event.message).toContain(
      `signed by trusted/release; its stages run ${registry.host}/trusted/signed@${digest}`,
    );
  }, 180_000);

  it('refuses an unsigned package: condition, Event, and no stage on any node', async () => {
    await pusher.image('trusted/unsigned', '1.0', 'never signed');
    await skyhookOf('unsigned', 'trusted/unsigned');
    await expectRefused('unsigned', 'trusted/unsigned', 'Unsigned');
  }, 120_000);

  it('refuses a package signed by a key the policy does not trust', async () => {
    await pusher.image('trusted/foreign', '1.0', 'signed by a stranger');
    await sign(`${registry.host}/trusted/foreign:1.0`, 'stranger');
    await skyhookOf('foreign', 'trusted/foreign');
    await expectRefused('foreign', 'trusted/foreign', 'UnknownKey');
  }, 120_000);

  it('refuses a tag re-pointed after signing, even with the signature copied to the new digest', async () => {
    const signed = await pusher.image('trusted/moved', '1.0', 'the reviewed build');
    await sign(`${registry.host}/trusted/moved:1.0`, 'release');
    const swapped = await pusher.image('trusted/moved', '1.0', 'a different build');
    const sig = await pusher.raw('trusted/moved', `${signed.replace(':', '-')}.sig`, OCI_MANIFEST);
    await pusher.manifest(
      'trusted/moved',
      `${swapped.replace(':', '-')}.sig`,
      JSON.parse(sig.toString()),
      OCI_MANIFEST,
    );
    await skyhookOf('moved', 'trusted/moved');
    await expectRefused('moved', 'trusted/moved', 'DigestMismatch');
  }, 120_000);

  it('runs an unsigned package under a Warn policy, pinned to its digest, with a Warning Event', async () => {
    const digest = await pusher.image('warned/unsigned', '1.0', 'never signed, tolerated');
    await skyhookOf('warned', 'warned/unsigned');
    await waitForSkyhook(h, 'warned', (scr) => scr.status?.status === 'complete', 120_000);
    const event = await eventOn('warned', 'PackageTrustWarning');
    expect(event.type).toBe('Warning');
    expect(event.message).toContain(
      `package pkg:1.0 (image ${registry.host}/warned/unsigned:1.0) refused by PackageTrustPolicy warned: Unsigned`,
    );
    expect(event.message).toContain('It runs anyway');
    const jobs = await stageJobs('warned');
    expect(jobs.length).toBeGreaterThan(0);
    for (const job of jobs) expect(packageImage(job)).toBe(`${registry.host}/warned/unsigned@${digest}`);
    const scr = await waitForSkyhook(h, 'warned', () => true);
    expect(scr.status?.conditions?.some((c) => c.type === 'PackageTrustRefused')).toBe(false);
  }, 180_000);

  it('reports each policy Ready (its keys load) at its generation', async () => {
    const path = `/apis/${API_GROUP}/${API_VERSION}/${KINDS.packageTrustPolicy.plural}`;
    type Policy = {
      metadata: { name: string; generation: number };
      status?: { observedGeneration?: number; conditions?: { type: string; status: string; reason: string }[] };
    };
    const ready = (p: Policy): boolean =>
      p.status?.observedGeneration === p.metadata.generation &&
      p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True' && c.reason === 'KeysLoaded') === true;
    const policies = await waitForList<Policy & { apiVersion?: string; kind?: string }>(
      h.cp.kubeConfig,
      path,
      (all) => all.length === 2 && all.every(ready),
      60_000,
      'both PackageTrustPolicies Ready',
    );
    expect(policies.map((p) => p.metadata.name).sort()).toEqual(['trusted', 'warned']);
  });
});
