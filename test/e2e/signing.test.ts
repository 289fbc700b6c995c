/**
 * Image-signature verification against the sandbox's real registry (CNCF Distribution: TLS from the
 * sandbox CA, basic auth), with images signed by the real cosign CLI in its key-pair, `.sig`-tag
 * format: signed images verify to the digest cosign signed (an index's own digest for a tag on an
 * index), and unsigned, foreign-key, moved-tag, copied-signature and unreachable cases are refused
 * with their reason; a registry with token authentication (as ghcr.io) too. Also `skyhook package verify`, the built CLI, with its exit codes. No control
 * plane and no nodes: the verifier needs only the registry.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki, type Pki } from '../../src/sandbox/pki.js';
import { startRegistry, type SandboxRegistry } from '../../src/sandbox/registry/registry.js';
import type { RegistryAccess, TrustedKey } from '../../src/signing/verdict.js';
import { verifyImage } from '../../src/signing/verify.js';
import { CLASSIC_FORMAT, cosignOk } from '../cosign-binary.js';
import { REPO_ROOT } from '../helm-binary.js';
import { OCI_MANIFEST, OciPusher } from './oci-push.js';
import { startTokenRegistry, type TokenRegistry } from './token-registry.js';

const canRun = process.platform === 'linux';
const credentials = { username: 'signer', password: 'registry-secret' };
const COSIGN_PASSWORD = 'key-password';

let runDir: string;
let work: string;
let registry: SandboxRegistry;
let pki: Pki;
let pusher: OciPusher;
let caPem: string;
let release: TrustedKey;
let stranger: TrustedKey;

const access = (overrides: Partial<RegistryAccess> = {}): RegistryAccess => ({
  credentialsFor: (host) => (host === registry.host ? credentials : undefined),
  caPem,
  ...overrides,
});

function cosignEnv(): Record<string, string> {
  return { COSIGN_PASSWORD, DOCKER_CONFIG: join(work, 'docker'), HOME: work, SSL_CERT_FILE: registry.caCert };
}

/** `cosign sign` as a package author runs it, with the key file `<name>.key`. */
async function sign(ref: string, key: string): Promise<void> {
  await cosignOk(['sign', '--key', `${key}.key`, '--yes', ...CLASSIC_FORMAT, ref], cosignEnv(), work);
}

async function keyPair(name: string): Promise<TrustedKey> {
  await cosignOk(['generate-key-pair', '--output-key-prefix', name], cosignEnv(), work);
  return { name, publicKeyPem: readFileSync(join(work, `${name}.pub`), 'utf8') };
}

const refused = (reason: string, digest?: string) => ({
  kind: 'refused',
  reason,
  ...(digest ? { digest } : {}),
});

(canRun ? describe : describe.skip)('cosign signatures through the registry', () => {
  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'skyhook-signing-'));
    work = join(runDir, 'work');
    mkdirSync(join(work, 'docker'), { recursive: true });
    pki = await createPki(runDir);
    registry = await startRegistry({ runDir, pki, credentials });
    caPem = readFileSync(registry.caCert, 'utf8');
    pusher = new OciPusher(registry.host, credentials, caPem);
    await cosignOk(['login', registry.host, '-u', credentials.username, '-p', credentials.password], cosignEnv(), work);
    release = await keyPair('release');
    stranger = await keyPair('stranger');
  }, 5 * 60_000);

  afterAll(async () => {
    await pusher?.close();
    await registry?.stop();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });

  it('verifies a tag on an index to the index digest cosign signed, in four requests', async () => {
    const digest = await pusher.index('signing/pkg', '1.0', 'package one');
    await sign(`${registry.host}/signing/pkg:1.0`, 'release');
    // cosign wrote the classic format: a manifest under the digest's .sig tag.
    const sig = JSON.parse(
      (await pusher.raw('signing/pkg', `${digest.replace(':', '-')}.sig`, OCI_MANIFEST)).toString(),
    );
    expect(sig.layers[0].annotations['dev.cosignproject.cosign/signature']).toEqual(expect.any(String));

    const byTag = await verifyImage(`${registry.host}/signing/pkg:1.0`, [stranger, release], access());
    expect(byTag.verdict).toEqual({ kind: 'verified', digest, keyName: 'release' });
    // The manifest HEAD (challenged once, then Basic up front), the .sig manifest, its one payload.
    expect(byTag.requests.map((r) => `${r.method} ${r.status} ${new URL(r.url).pathname}`)).toEqual([
      'HEAD 401 /v2/signing/pkg/manifests/1.0',
      'HEAD 200 /v2/signing/pkg/manifests/1.0',
      `GET 200 /v2/signing/pkg/manifests/${digest.replace(':', '-')}.sig`,
      `GET 200 /v2/signing/pkg/blobs/${sig.layers[0].digest}`,
    ]);

    const byDigest = await verifyImage(`${registry.host}/signing/pkg@${digest}`, [release], access());
    expect(byDigest.verdict).toEqual({ kind: 'verified', digest, keyName: 'release' });
    expect(byDigest.requests).toHaveLength(3);

    // As a node sees it: ghcr.io's name, served by the mirror, credentials keyed by the mirror's host.
    const mirrored = await verifyImage(
      'ghcr.io/signing/pkg:1.0',
      [release],
      access({ mirrors: { 'ghcr.io': `https://${registry.host}` } }),
    );
    expect(mirrored.verdict).toEqual({ kind: 'verified', digest, keyName: 'release' });
  }, 120_000);

  it('refuses an unsigned image as unsigned, naming its digest', async () => {
    const digest = await pusher.image('signing/plain', '1.0', 'never signed');
    const { verdict } = await verifyImage(`${registry.host}/signing/plain:1.0`, [release], access());
    expect(verdict).toMatchObject(refused('unsigned', digest));
  }, 60_000);

  it('refuses an image signed by a key the policy does not trust as unknown-key', async () => {
    const digest = await pusher.image('signing/foreign', '1.0', 'signed by a stranger');
    await sign(`${registry.host}/signing/foreign:1.0`, 'stranger');
    const { verdict } = await verifyImage(`${registry.host}/signing/foreign:1.0`, [release], access());
    expect(verdict).toMatchObject(refused('unknown-key', digest));
    const trusting = await verifyImage(`${registry.host}/signing/foreign:1.0`, [release, stranger], access());
    expect(trusting.verdict).toEqual({ kind: 'verified', digest, keyName: 'stranger' });
  }, 120_000);

  it('refuses a tag moved after signing (unsigned), and a signature copied to it (digest-mismatch)', async () => {
    const signed = await pusher.image('signing/moved', '1.0', 'the reviewed build');
    await sign(`${registry.host}/signing/moved:1.0`, 'release');
    const swapped = await pusher.image('signing/moved', '1.0', 'a different build');
    // cosign keys signatures by digest: the new digest has no .sig tag of its own.
    const moved = await verifyImage(`${registry.host}/signing/moved:1.0`, [release], access());
    expect(moved.verdict).toMatchObject(refused('unsigned', swapped));

    // Copying the signed digest's .sig manifest to the new digest's tag: a valid signature, another image.
    const sigManifest = await pusher.raw('signing/moved', `${signed.replace(':', '-')}.sig`, OCI_MANIFEST);
    await pusher.manifest(
      'signing/moved',
      `${swapped.replace(':', '-')}.sig`,
      JSON.parse(sigManifest.toString()),
      OCI_MANIFEST,
    );
    const copied = await verifyImage(`${registry.host}/signing/moved:1.0`, [release], access());
    expect(copied.verdict).toMatchObject(refused('digest-mismatch', swapped));
    if (copied.verdict.kind === 'refused') expect(copied.verdict.message).toContain(signed);
  }, 120_000);

  it('refuses as unreachable, with the status and what to check, when the registry cannot be asked', async () => {
    await pusher.image('signing/reach', '1.0', 'reachable');
    const image = `${registry.host}/signing/reach:1.0`;
    const wrong = await verifyImage(
      image,
      [release],
      access({ credentialsFor: () => ({ ...credentials, password: 'x' }) }),
    );
    expect(wrong.verdict).toMatchObject(refused('unreachable'));
    if (wrong.verdict.kind === 'refused') expect(wrong.verdict.message).toMatch(/HTTP 401.*pull secret/);
    const missing = await verifyImage(`${registry.host}/signing/reach:9.9`, [release], access());
    if (missing.verdict.kind !== 'refused') throw new Error('a missing tag verified');
    expect(missing.verdict.reason).toBe('unreachable');
    expect(missing.verdict.message).toMatch(/HTTP 404.*tag was pushed/);
    const untrusted = await verifyImage(image, [release], { credentialsFor: () => credentials });
    if (untrusted.verdict.kind !== 'refused') throw new Error('verified without trusting the CA');
    expect(untrusted.verdict.reason).toBe('unreachable');
    expect(untrusted.verdict.message).toMatch(/no answer.*certificate is trusted/);
  }, 60_000);

  describe('a registry with token authentication (as ghcr.io and Docker Hub)', () => {
    let tokenRegistry: TokenRegistry;

    beforeAll(async () => {
      tokenRegistry = await startTokenRegistry(runDir, pki, credentials);
    }, 60_000);

    afterAll(async () => {
      await tokenRegistry?.stop();
    });

    it('verifies through the Bearer token flow, and is unreachable when the token service refuses', async () => {
      const host = tokenRegistry.host;
      const tokenPusher = new OciPusher(host, `Bearer ${tokenRegistry.mint('signing/token', ['pull', 'push'])}`, caPem);
      const digest = await tokenPusher.image('signing/token', '1.0', 'behind a token service');
      await tokenPusher.close();
      await cosignOk(['login', host, '-u', credentials.username, '-p', credentials.password], cosignEnv(), work);
      await sign(`${host}/signing/token:1.0`, 'release');

      const before = tokenRegistry.tokenRequests.length;
      const tokenAccess = access({ credentialsFor: (h) => (h === host ? credentials : undefined) });
      const result = await verifyImage(`${host}/signing/token:1.0`, [release], tokenAccess);
      expect(result.verdict).toEqual({ kind: 'verified', digest, keyName: 'release' });
      // One challenge, one token for the repository's pull scope, then everything with that token.
      expect(result.requests.map((r) => `${r.method} ${r.status} ${new URL(r.url).pathname}`)).toEqual([
        'HEAD 401 /v2/signing/token/manifests/1.0',
        'GET 200 /token',
        'HEAD 200 /v2/signing/token/manifests/1.0',
        `GET 200 /v2/signing/token/manifests/${digest.replace(':', '-')}.sig`,
        expect.stringMatching(/^GET 200 \/v2\/signing\/token\/blobs\/sha256:/),
      ]);
      expect(tokenRegistry.tokenRequests.slice(before)).toEqual(['200 repository:signing/token:pull']);

      const anonymous = await verifyImage(
        `${host}/signing/token:1.0`,
        [release],
        access({ credentialsFor: () => undefined }),
      );
      if (anonymous.verdict.kind !== 'refused') throw new Error('verified without credentials');
      expect(anonymous.verdict.reason).toBe('unreachable');
      expect(anonymous.verdict.message).toMatch(/token service .* answered 401.*pull secret/);
    }, 120_000);
  });

  describe('skyhook package verify (the built CLI)', () => {
    function cli(args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
      return new Promise((resolveRun) => {
        const child = execFile(
          process.execPath,
          [join(REPO_ROOT, 'bin/skyhook.js'), 'package', 'verify', ...args],
          { cwd: REPO_ROOT },
          (error, stdout, stderr) =>
            resolveRun({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
        );
        child.stdin?.end(stdin);
      });
    }

    it('prints the digest and key and exits 0 for a signed image; the reason and fix, exit 1, otherwise', async () => {
      const digest = await pusher.image('signing/cli', '2.0', 'signed for the CLI');
      await sign(`${registry.host}/signing/cli:2.0`, 'release');
      await pusher.image('signing/cli', 'unsigned', 'never signed');
      const secret = join(work, 'pull-secret.json');
      const auth = Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64');
      writeFileSync(secret, JSON.stringify({ auths: { [registry.host]: { auth } } }));
      const common = ['--key', join(work, 'release.pub'), '--ca-file', registry.caCert];
      const mirror = ['--mirror', `ghcr.io=https://${registry.host}`];

      const ok = await cli(['ghcr.io/signing/cli:2.0', ...common, ...mirror, '--pull-secret-file', secret]);
      expect(ok).toMatchObject({ code: 0 });
      expect(ok.stdout).toContain(`digest:    ${digest}`);
      expect(ok.stdout).toContain('signed by: release.pub');

      const viaStdin = await cli(
        [
          `${registry.host}/signing/cli:2.0`,
          ...common,
          '--username',
          credentials.username,
          '--password-stdin',
          '-o',
          'json',
        ],
        `${credentials.password}\n`,
      );
      expect(viaStdin.code).toBe(0);
      expect(JSON.parse(viaStdin.stdout)).toMatchObject({ kind: 'verified', digest, keyName: 'release.pub' });

      const unsigned = await cli([`${registry.host}/signing/cli:unsigned`, ...common, '--pull-secret-file', secret]);
      expect(unsigned.code).toBe(1);
      expect(unsigned.stdout).toMatch(/^refused \(unsigned\): .*cosign sign --key/);

      const foreign = await cli([
        `${registry.host}/signing/cli:2.0`,
        '--key',
        join(work, 'stranger.pub'),
        '--ca-file',
        registry.caCert,
        '--pull-secret-file',
        secret,
      ]);
      expect(foreign.code).toBe(1);
      expect(foreign.stdout).toMatch(/^refused \(unknown-key\): .*trust the signer's public key/);

      const anonymous = await cli([`${registry.host}/signing/cli:2.0`, ...common]);
      expect(anonymous.code).toBe(1);
      expect(anonymous.stdout).toMatch(/^refused \(unreachable\): .*HTTP 401/);

      const usage = await cli([`${registry.host}/signing/cli:2.0`]);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('--key FILE.pub is required');
    }, 120_000);
  });
});
