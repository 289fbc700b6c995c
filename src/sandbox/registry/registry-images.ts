/**
 * The package images in the sandbox registry: `npm run images` pushes them (the project's
 * shellscript package and NVIDIA's packages, `ghcr.io/…/skyhook-packages/…`) into a registry
 * storage beside the image set's archives, `<set>/registry/`, so the storage is cached by the same
 * content key and pruned with its set: a warm run finds it and pushes nothing. Real nodes of the
 * sandbox then pull these images through the registry as their mirror, as a cluster pulls from
 * ghcr.io, and import only the rest (the agent image, busybox, pause) from their archives.
 *
 * The storage is written as `registry.partial` by a registry started for the push alone (on a
 * throwaway CA) and renamed when every image is in, so a sandbox never serves half of it.
 */
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger, type Logger } from '../../kube/logger.js';
import { acquireCacheLock } from '../images/cache-lock.js';
import { imageBuildah, type ImageSet } from '../images/ensure-images.js';
import { runCommand } from '../images/run-command.js';
import { createPki } from '../pki.js';
import { pushArchive } from './push-images.js';
import { startRegistry } from './registry.js';

const thisRepoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');

/** The images of `set` the registry holds: the package images, under the names packages ask for. */
export function registryImages(set: ImageSet): ImageSet['images'] {
  const refs = new Set([set.packageImage, set.upstreamPackageImage, ...set.nvidiaPackages.map((p) => p.ref)]);
  return set.images.filter((image) => refs.has(image.ref));
}

/**
 * What a node pulling through the registry imports: every archive but the registry's images, under
 * a key of its own (its golden root filesystem differs from that of a node that imports them all).
 */
export function archivesBesideRegistry(set: ImageSet): { archives: string[]; key: string } {
  const held = new Set(registryImages(set).map((image) => image.archive));
  return {
    archives: set.images.filter((image) => !held.has(image.archive)).map((image) => join(set.dir, image.archive)),
    key: `${set.key}-pulls-packages`,
  };
}

export const registryStorageDir = (set: ImageSet): string => join(set.dir, 'registry');

export interface RegistryImages {
  storageDir: string;
  refs: string[];
  /** False when the storage was already there (nothing pushed). */
  pushed: boolean;
}

/** The registry storage of `set`, pushed now when it is not there yet (root: buildah's storage). */
export async function ensureRegistryImages(set: ImageSet, options: { logger?: Logger } = {}): Promise<RegistryImages> {
  const logger = (options.logger ?? silentLogger()).child({ component: 'registry-images' });
  const storageDir = registryStorageDir(set);
  const images = registryImages(set);
  const result = (pushed: boolean): RegistryImages => ({ storageDir, refs: images.map((i) => i.ref), pushed });
  // Nothing when built (or SKYHOOK_REGISTRY_BIN is set); the sandbox serves the storage with it.
  await runCommand('bash', [join(thisRepoRoot, 'tools/build-registry.sh')]);
  if (existsSync(storageDir)) return result(false);
  if (process.getuid?.() !== 0)
    throw new Error(
      'pushing the package images into the sandbox registry needs root (buildah storage): run `sudo npm run images`, or as root',
    );
  const cacheDir = dirname(set.dir);
  const lock = await acquireCacheLock(join(cacheDir, '.lock'), () =>
    logger.info('another image build holds the cache lock; waiting for it'),
  );
  const work = mkdtempSync(join(tmpdir(), 'skyhook-registry-push-'));
  try {
    // Whoever held the lock may just have pushed this very set.
    if (existsSync(storageDir)) return result(false);
    const partial = `${storageDir}.partial`;
    rmSync(partial, { recursive: true, force: true });
    const pki = await createPki(work);
    const registry = await startRegistry({ runDir: work, pki, storageDir: partial });
    try {
      for (const image of images) {
        await pushArchive(imageBuildah(cacheDir), registry, join(set.dir, image.archive), image.ref);
        logger.info({ ref: image.ref }, `pushed ${image.ref} into the sandbox registry`);
      }
    } finally {
      await registry.stop();
    }
    renameSync(partial, storageDir);
    return result(true);
  } finally {
    rmSync(work, { recursive: true, force: true });
    await lock.release();
  }
}
