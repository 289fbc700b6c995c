/**
 * `npm run images` end to end: the archives real nodes import exist under the names pods ask for,
 * a second call builds nothing, the package images are in the sandbox registry's storage (pushed
 * once), and the built images work when run as containers (buildah run: runc, no network): the agent's CLI and `skyhook agent validate` of the built package inside the
 * skyhook image, the nsenter the reboot pod relies on, the busybox and pause stand-ins.
 * Needs root on Linux (buildah, mmdebstrap); a cold first run builds everything (minutes).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/kube/logger.js';
import { ensureImages, imageBuildah, type ImageSet } from '../../src/sandbox/images/ensure-images.js';
import { findUpstreamPackages } from '../../src/sandbox/images/nvidia-packages.js';
import { runCommand } from '../../src/sandbox/images/run-command.js';
import { createPki } from '../../src/sandbox/pki.js';
import { ensureRegistryImages } from '../../src/sandbox/registry/registry-images.js';
import { startRegistry } from '../../src/sandbox/registry/registry.js';
import { REPO_ROOT } from '../helm-binary.js';

const canBuild = process.platform === 'linux' && process.getuid?.() === 0;
if (!canBuild) console.warn('images.test.ts skipped: building images needs root on Linux (buildah, mmdebstrap)');

interface ArchiveManifestEntry {
  Config: string;
  RepoTags: string[];
  Layers: string[];
}
interface ImageConfig {
  config: { Entrypoint?: string[] | null; Cmd?: string[] | null; User?: string; Env?: string[] };
}

async function readFromTar<T>(archive: string, member: string): Promise<T> {
  return JSON.parse(await runCommand('tar', ['-xOf', archive, member])) as T;
}

const buildah = imageBuildah();

/** GET over TLS trusting `ca` (the registry asks no credentials here), as JSON. */
function getJson(host: string, path: string, ca: string): Promise<unknown> {
  return new Promise((resolveBody, reject) => {
    request(`https://${host}${path}`, { ca }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () =>
        res.statusCode === 200
          ? resolveBody(JSON.parse(body))
          : reject(new Error(`${path}: ${res.statusCode} ${body}`)),
      );
    })
      .on('error', reject)
      .end();
  });
}
let set: ImageSet;

/** The image of `ref` exactly as this set's archive holds it (the build storage's tag may be newer). */
function archiveOf(ref: string): string {
  const image = set.images.find((candidate) => candidate.ref === ref);
  if (!image) throw new Error(`${ref} is not in the image set`);
  return `docker-archive:${join(set.dir, image.archive)}`;
}

/** Runs argv in a container (runc, no network) of the archived image `ref`. */
function runIn(ref: string, argv: string[], volumes: string[] = []): Promise<string> {
  return buildah.runInImage(archiveOf(ref), argv, volumes);
}

(canBuild ? describe : describe.skip)('images built here', () => {
  beforeAll(async () => {
    const started = performance.now();
    set = await ensureImages({ logger: createLogger({ level: 'info' }) });
    console.log(`ensureImages: ${((performance.now() - started) / 1000).toFixed(1)} s, key ${set.key}, ${set.dir}`);
  }, 20 * 60_000);

  it('names the images the operator, the kubelet and the README demo ask for', () => {
    expect(set.agentImage).toBe('ghcr.io/skyhook-ts/skyhook:0.1.0');
    expect(set.sentinelImage).toBe(set.agentImage);
    expect(set.upstreamPackageImage).toBe('ghcr.io/nvidia/skyhook-packages/shellscript:1.1.0');
    expect(set.pauseImage).toBe('registry.k8s.io/pause:3.10');
    // NVIDIA's five published packages when their directories are beside the checkout; otherwise
    // only shellscript 1.1.1, as a stand-in under NVIDIA's name.
    const nvidia = findUpstreamPackages(REPO_ROOT)
      ? [
          'ghcr.io/nvidia/skyhook-packages/kdump:1.1.0',
          'ghcr.io/nvidia/skyhook-packages/nvidia-tuned:0.2.3',
          'ghcr.io/nvidia/skyhook-packages/shellscript:1.1.1',
          'ghcr.io/nvidia/skyhook-packages/tuned:1.2.0',
          'ghcr.io/nvidia/skyhook-packages/tuning:1.1.4',
        ]
      : ['ghcr.io/nvidia/skyhook-packages/shellscript:1.1.1'];
    expect(set.images.map((image) => image.ref).sort()).toEqual(
      [
        'docker.io/library/busybox:1.37',
        'docker.io/library/busybox:latest',
        'ghcr.io/nvidia/skyhook-packages/shellscript:1.1.0',
        ...nvidia,
        'ghcr.io/skyhook-ts/packages/shellscript:1.1.1',
        'ghcr.io/skyhook-ts/skyhook:0.1.0',
        'registry.k8s.io/pause:3.10',
      ].sort(),
    );
    expect(set.dir.startsWith(process.cwd())).toBe(false);
  });

  it('writes docker-archives whose RepoTags are those names', async () => {
    expect(set.archives).toHaveLength(set.images.length);
    for (const image of set.images) {
      const archive = join(set.dir, image.archive);
      expect(set.archives).toContain(archive);
      expect(statSync(archive).size).toBe(image.bytes);
      const manifest = await readFromTar<ArchiveManifestEntry[]>(archive, 'manifest.json');
      expect(manifest).toHaveLength(1);
      expect(manifest[0]!.RepoTags).toEqual([image.ref]);
      expect(manifest[0]!.Layers.length).toBeGreaterThan(0);
    }
  });

  it('gives each image the entrypoint, command and user of the image it stands for', async () => {
    const config = async (ref: string): Promise<ImageConfig['config']> => {
      const archive = join(set.dir, set.images.find((image) => image.ref === ref)!.archive);
      const [entry] = await readFromTar<ArchiveManifestEntry[]>(archive, 'manifest.json');
      return (await readFromTar<ImageConfig>(archive, entry!.Config)).config;
    };
    expect(await config(set.agentImage)).toMatchObject({ Entrypoint: ['skyhook'] });
    expect(await config(set.pauseImage)).toMatchObject({ Entrypoint: ['/pause'], User: '65535:65535' });
    expect(await config(set.busyboxImage)).toMatchObject({ Cmd: ['sh'] });
  });

  it('builds nothing the second time', async () => {
    const before = statSync(join(set.dir, 'images.json')).mtimeMs;
    const archiveTimes = (): number[] => set.archives.map((archive) => statSync(archive).mtimeMs);
    const archivesBefore = archiveTimes();
    const again = await ensureImages();
    expect(again.key).toBe(set.key);
    expect(again.archives).toEqual(set.archives);
    // Nothing was written again: not the index, not one image archive.
    expect(statSync(join(set.dir, 'images.json')).mtimeMs).toBe(before);
    expect(archiveTimes()).toEqual(archivesBefore);
  });

  it('pushes the package images into the sandbox registry storage once, not the agent, busybox or pause', async () => {
    const first = await ensureRegistryImages(set);
    const again = await ensureRegistryImages(set);
    expect(again).toEqual({ ...first, pushed: false });
    const work = mkdtempSync(join(tmpdir(), 'images-registry-'));
    const registry = await startRegistry({ runDir: work, pki: await createPki(work), storageDir: first.storageDir });
    try {
      const ca = readFileSync(registry.caCert, 'utf8');
      const catalog = (await getJson(registry.host, '/v2/_catalog', ca)) as { repositories: string[] };
      expect(catalog.repositories).toEqual(
        expect.arrayContaining(['nvidia/skyhook-packages/shellscript', 'skyhook-ts/packages/shellscript']),
      );
      for (const pkg of set.nvidiaPackages)
        expect(catalog.repositories).toContain(pkg.ref.replace(/^ghcr\.io\//, '').replace(/:[^:]+$/, ''));
      expect(catalog.repositories).not.toContain('skyhook-ts/skyhook');
      expect(catalog.repositories.some((r) => r.includes('pause') || r.includes('busybox'))).toBe(false);
      const tags = (await getJson(registry.host, '/v2/nvidia/skyhook-packages/shellscript/tags/list', ca)) as {
        tags: string[];
      };
      expect(tags.tags).toContain('1.1.0');
    } finally {
      await registry.stop();
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('runs the agent inside the skyhook image', async () => {
    const help = await runIn(set.agentImage, ['skyhook', 'agent', '--help']);
    expect(help).toContain('skyhook agent validate');
    const version = await runIn(set.agentImage, ['node', '--version']);
    expect(version.trim()).toMatch(/^v24\./);
  });

  describe('skyhook agent validate inside the skyhook image', () => {
    let packageRoot: { path: string; unmount: () => Promise<void> };
    let broken: string | undefined;
    beforeAll(async () => {
      packageRoot = await buildah.mountImage(archiveOf(set.upstreamPackageImage));
      broken = mkdtempSync(join(tmpdir(), 'broken-package-'));
      writeFileSync(
        join(broken, 'config.json'),
        JSON.stringify({ schema_version: 'v1', package_name: 'broken', modes: {} }),
      );
    });
    afterAll(async () => {
      await packageRoot?.unmount();
      // Undefined when beforeAll failed before making it: that failure is the one to report.
      if (broken) rmSync(broken, { recursive: true, force: true });
    });

    it('accepts the built shellscript package', async () => {
      const report = await runIn(
        set.agentImage,
        ['skyhook', 'agent', 'validate', '/pkg'],
        [`${packageRoot.path}/skyhook-package:/pkg:ro`],
      );
      expect(report).toMatch(/shellscript/);
    });

    it('rejects a broken package with a non-zero exit', async () => {
      await expect(
        runIn(set.agentImage, ['skyhook', 'agent', 'validate', '/pkg'], [`${broken}:/pkg:ro`]),
      ).rejects.toThrow(/exit [1-9]/);
    });
  });

  it("gives the reboot pod util-linux nsenter, which runs the host's commands, not applets", async () => {
    const out = await runIn(set.sentinelImage, [
      '/bin/sh',
      '-c',
      'readlink -f "$(command -v nsenter)"; nsenter --version',
    ]);
    expect(out).toMatch(/^\/usr\/bin\/nsenter\n/);
    expect(out).toContain('util-linux');
  });

  it('makes a pause image whose /pause is the upstream program', async () => {
    expect(await runIn(set.pauseImage, ['/pause', '-v'])).toContain('pause.c v3.10');
  });

  it('makes a busybox whose cp -r copies over an existing copy with symlinks (as docker.io busybox)', async () => {
    const script =
      'mkdir -p /a /b && echo x > /a/f && ln -s f /a/l && cp -r /a/. /b/ && cp -r /a/. /b/ && busybox | head -1';
    expect(await runIn(set.busyboxImage, ['sh', '-c', script])).toMatch(/^BusyBox v1\.37\./);
  });
});
