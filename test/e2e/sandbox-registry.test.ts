/**
 * The sandbox's OCI registry (CNCF Distribution built from its Go module): it serves over TLS with a
 * certificate from the sandbox's CA and requires basic auth. A built image pushed with the right
 * credentials can be pulled back, byte for byte the same image; anonymous requests and wrong
 * passwords are refused, for pushes and pulls alike. Needs root on Linux (buildah).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/kube/logger.js';
import { Buildah } from '../../src/sandbox/images/buildah.js';
import { ensureImages, imageBuildah, type ImageSet } from '../../src/sandbox/images/ensure-images.js';
import { createPki } from '../../src/sandbox/pki.js';
import { pushArchive } from '../../src/sandbox/registry/push-images.js';
import { probeRegistry, startRegistry, type SandboxRegistry } from '../../src/sandbox/registry/registry.js';

const canRun = process.platform === 'linux' && process.getuid?.() === 0;
if (!canRun) console.warn('sandbox-registry.test.ts skipped: buildah needs root on Linux');

const credentials = { username: 'skyhook', password: 'registry-secret' };
const PRIVATE_REF = 'ghcr.io/skyhook-ts/private/shellscript:1.1.1';

let runDir: string;
let registry: SandboxRegistry;
let set: ImageSet;

(canRun ? describe : describe.skip)('the sandbox registry', () => {
  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'skyhook-registry-'));
    set = await ensureImages({ logger: createLogger({ level: 'warn' }) });
    const pki = await createPki(runDir);
    const started = performance.now();
    registry = await startRegistry({ runDir, pki, credentials });
    console.log(`registry ready in ${((performance.now() - started) / 1000).toFixed(1)} s at ${registry.host}`);
  }, 10 * 60_000);

  afterAll(async () => {
    await registry?.stop();
    rmSync(runDir, { recursive: true, force: true });
  });

  it('answers over TLS from the sandbox CA to its credentials, and refuses anonymous and wrong ones', async () => {
    const ca = readFileSync(registry.caCert, 'utf8');
    expect(await probeRegistry(registry.host, ca, credentials)).toBe(200);
    expect(await probeRegistry(registry.host, ca)).toBe(401);
    expect(await probeRegistry(registry.host, ca, { ...credentials, password: 'wrong' })).toBe(401);
    // A client that does not trust the sandbox's CA gets no answer at all (TLS fails).
    expect(await probeRegistry(registry.host, '', credentials)).toBe(0);
  });

  it(
    'takes a push with its credentials and gives the same image back to a pull with them',
    async () => {
      const archive = set.images.find((image) => image.ref === set.packageImage);
      if (!archive) throw new Error(`${set.packageImage} is not in the image set`);
      const started = performance.now();
      const destination = await pushArchive(imageBuildah(), registry, join(set.dir, archive.archive), PRIVATE_REF);
      console.log(`push of ${PRIVATE_REF}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      expect(destination).toBe(`${registry.host}/skyhook-ts/private/shellscript:1.1.1`);

      const pullDir = join(runDir, 'pull-storage');
      const puller = new Buildah({ root: join(pullDir, 'root'), runRoot: join(pullDir, 'run') });
      const creds = `${credentials.username}:${credentials.password}`;
      const pulled = await puller.pullFromRegistry(destination, creds, registry.certDir);
      const source = await imageBuildah().importArchive(join(set.dir, archive.archive));
      expect(pulled).toBe(source);

      // A storage of its own: one that already holds the image may answer from it.
      const stranger = new Buildah({ root: join(pullDir, 'root2'), runRoot: join(pullDir, 'run2') });
      await expect(
        stranger.pullFromRegistry(destination, `${credentials.username}:wrong`, registry.certDir),
      ).rejects.toThrow(/unauthorized|authentication required|401/i);
      await expect(
        stranger.pullFromRegistry(`${registry.host}/skyhook-ts/private/shellscript:9.9.9`, creds, registry.certDir),
      ).rejects.toThrow(/manifest unknown|not found/i);
    },
    5 * 60_000,
  );

  it(
    'refuses a push with wrong credentials',
    async () => {
      const archive = set.images.find((image) => image.ref === set.busyboxImage);
      if (!archive) throw new Error(`${set.busyboxImage} is not in the image set`);
      const wrong = { ...registry, credentials: { ...credentials, password: 'wrong' } };
      await expect(
        pushArchive(imageBuildah(), wrong, join(set.dir, archive.archive), 'docker.io/library/busybox:1.37'),
      ).rejects.toThrow(/unauthorized|authentication required|401/i);
    },
    5 * 60_000,
  );
});
