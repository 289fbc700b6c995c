/**
 * `ensureImages`: the images real nodes import, built here without a registry or a Docker engine
 * and cached by content key outside the repository. Cache layout under <cacheDir>:
 *   <setKey>/       docker-archive tarballs for nodes + images.json (an ImageSet)
 *   base-<baseKey>/ the stand-ins' tarballs (node base, busybox, pause) + base.json
 *   buildah/        the build's own containers/storage
 *   .lock           flock(2) while a build runs
 * A directory is written as `<name>.partial` and renamed when complete, so a reader never sees half
 * a set. An unchanged checkout costs hashing its inputs: no lock, no buildah.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger, type Logger } from '../../kube/logger.js';
import { Buildah } from './buildah.js';
import { BUILD_PACKAGES, gatherBuildInputs, PAUSE_VERSION, type BuildInputs } from './build-inputs.js';
import { BUSYBOX_SOURCE, buildBusyboxFromSource } from './busybox-source.js';
import { linkOrCopy, markUsed, pruneOldDirs, removeLeftoversOfDeadBuilds } from './cache-dirs.js';
import { acquireCacheLock } from './cache-lock.js';
import { archiveFileName, IMAGE_REFS, type ImageName } from './image-refs.js';
import { buildNvidiaPackageImages, exportNvidiaImages, type NvidiaImage, standInNotice } from './nvidia-packages.js';
import { buildShellscriptImage, buildSkyhookImage } from './project-images.js';
import { runCommand } from './run-command.js';
import { buildBusyboxImage, buildNodeBaseImage, buildPauseImage } from './stand-ins.js';

export interface EnsureImagesOptions {
  /** The checkout to build from (default: the one this code is in). */
  repoRoot?: string;
  /** Default: $SKYHOOK_CACHE_DIR or ~/.cache/skyhook-ts, then `images/`. */
  cacheDir?: string;
  logger?: Logger;
}

export interface ImageSet {
  key: string;
  dir: string;
  /** docker-archive tarballs, one tag each, for `ctr -n k8s.io images import`. */
  archives: string[];
  agentImage: string;
  packageImage: string;
  /** The package image under the name the upstream README demo uses. */
  upstreamPackageImage: string;
  pauseImage: string;
  /** Sentinel container and reboot pod (SENTINEL_IMAGE): the agent image (see nodeop-settings.ts). */
  sentinelImage: string;
  busyboxImage: string;
  /** NVIDIA's package images on the nodes, under NVIDIA's names (`ghcr.io/nvidia/skyhook-packages/…`). */
  nvidiaPackages: NvidiaImage[];
  images: Array<{ ref: string; archive: string; bytes: number }>;
}

/** Stand-ins go into the base directory; the rest are the project's own images. */
const BASE_IMAGES: readonly ImageName[] = ['nodeBase', 'busybox', 'busyboxLatest', 'pause'];
const NODE_IMAGES: readonly ImageName[] = [
  'skyhook',
  'shellscript',
  'shellscriptUpstream',
  'busybox',
  'busyboxLatest',
  'pause',
];

const thisRepoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');

export function defaultImageCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheRoot = env['SKYHOOK_CACHE_DIR'] ?? join(env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'skyhook-ts');
  return join(cacheRoot, 'images');
}

/** The build's buildah (own storage); also for tests that run commands inside the built images. */
export function imageBuildah(cacheDir = defaultImageCacheDir()): Buildah {
  return new Buildah({ root: join(cacheDir, 'buildah/storage'), runRoot: '/run/skyhook-ts/buildah' });
}

async function timed<T>(logger: Logger, phase: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  const durationMs = Math.round(performance.now() - started);
  logger.info({ phase, durationMs }, `${phase}: ${(durationMs / 1000).toFixed(1)} s`);
  return result;
}

function readImageSet(dir: string): ImageSet | undefined {
  const file = join(dir, 'images.json');
  if (!existsSync(file)) return undefined;
  const stored = JSON.parse(readFileSync(file, 'utf8')) as ImageSet;
  // The set is addressed by its directory; names inside are relative to it.
  return { ...stored, dir, archives: stored.images.map((image) => join(dir, image.archive)) };
}

function describeSet(key: string, dir: string, nvidiaPackages: NvidiaImage[]): ImageSet {
  const images = [
    ...NODE_IMAGES.map((name) => ({ ref: IMAGE_REFS[name], archive: archiveFileName(name) })),
    ...nvidiaPackages,
  ].map(({ ref, archive }) => ({ ref, archive, bytes: statSync(join(dir, archive)).size }));
  return {
    key,
    dir,
    archives: images.map((image) => join(dir, image.archive)),
    agentImage: IMAGE_REFS.skyhook,
    packageImage: IMAGE_REFS.shellscript,
    upstreamPackageImage: IMAGE_REFS.shellscriptUpstream,
    pauseImage: IMAGE_REFS.pause,
    sentinelImage: IMAGE_REFS.skyhook,
    busyboxImage: IMAGE_REFS.busybox,
    nvidiaPackages,
    images,
  };
}

/** Built image IDs by name; archives are written from these, never from a tag someone may move. */
type BuiltImages = Partial<Record<ImageName, string>>;

async function exportImages(
  buildah: Buildah,
  built: BuiltImages,
  names: readonly ImageName[],
  dir: string,
): Promise<void> {
  for (const name of names) {
    const id = built[name];
    if (!id) throw new Error(`internal: ${IMAGE_REFS[name]} was not built in this run`);
    await buildah.exportArchive(id, IMAGE_REFS[name], join(dir, archiveFileName(name)));
  }
}

/** Builds the stand-ins into base-<key>/, or loads them from there into a fresh storage. */
async function ensureBaseImages(
  buildah: Buildah,
  inputs: BuildInputs,
  cacheDir: string,
  scratch: string,
  logger: Logger,
): Promise<string> {
  const baseDir = join(cacheDir, `base-${inputs.baseKey}`);
  const baseFile = join(baseDir, 'base.json');
  if (existsSync(baseFile)) {
    markUsed(baseDir);
    // The Dockerfiles build FROM these names: they must name this base's images (another checkout's
    // build, or a wiped storage, may have left them naming something else or nothing).
    const ids = (JSON.parse(readFileSync(baseFile, 'utf8')) as { ids?: BuiltImages }).ids ?? {};
    for (const name of BASE_IMAGES) {
      if ((await buildah.imageId(IMAGE_REFS[name])) === ids[name]) continue;
      await timed(logger, `load ${IMAGE_REFS[name]} from the base cache`, () =>
        buildah.importArchive(join(baseDir, archiveFileName(name))),
      );
    }
    return baseDir;
  }
  const busyboxBinary = await timed(logger, `busybox ${BUSYBOX_SOURCE.version} from source (defconfig, static)`, () =>
    buildBusyboxFromSource(join(scratch, 'busybox-build'), join(cacheDir, 'downloads'), inputs.nodeBase.rootfs.mirror),
  );
  await timed(logger, `busybox stand-in (${IMAGE_REFS.busybox}, :latest)`, () =>
    buildBusyboxImage(buildah, join(scratch, 'busybox'), busyboxBinary, [IMAGE_REFS.busybox, IMAGE_REFS.busyboxLatest]),
  );
  await timed(logger, `pause from pause.c (${IMAGE_REFS.pause})`, () =>
    buildPauseImage(buildah, join(scratch, 'pause'), inputs.pauseSource, PAUSE_VERSION, IMAGE_REFS.pause),
  );
  await timed(
    logger,
    `node base: mmdebstrap + node ${inputs.nodeBase.nodeVersion} + npm ${inputs.nodeBase.npmVersion} (${IMAGE_REFS.nodeBase})`,
    () => buildNodeBaseImage(buildah, join(scratch, 'node-base'), inputs.nodeBase, IMAGE_REFS.nodeBase),
  );
  // Read right after building, under the cache lock: no other build can have moved these tags.
  const built: BuiltImages = {};
  for (const name of BASE_IMAGES) built[name] = await buildah.imageId(IMAGE_REFS[name]);
  const partial = `${baseDir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  await timed(logger, 'export the stand-ins to the base cache', () =>
    exportImages(buildah, built, BASE_IMAGES, partial),
  );
  writeFileSync(join(partial, 'base.json'), JSON.stringify({ key: inputs.baseKey, ids: built }, null, 2));
  renameSync(partial, baseDir);
  return baseDir;
}

async function buildSet(inputs: BuildInputs, cacheDir: string, logger: Logger): Promise<ImageSet> {
  if (process.getuid?.() !== 0) {
    throw new Error(
      'building the images needs root (buildah storage, mmdebstrap root mode, build mounts): run `sudo npm run images`, or as root',
    );
  }
  const buildah = imageBuildah(cacheDir);
  const scratch = join(cacheDir, `scratch-${process.pid}`);
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  try {
    const baseDir = await ensureBaseImages(buildah, inputs, cacheDir, scratch, logger);
    const skyhook = await timed(logger, `skyhook image from ./Dockerfile (${IMAGE_REFS.skyhook})`, () =>
      buildSkyhookImage(buildah, inputs.repoRoot, scratch),
    );
    const shellscript = await timed(
      logger,
      `shellscript package from packages/shellscript (${IMAGE_REFS.shellscript}, ${IMAGE_REFS.shellscriptUpstream})`,
      () => buildShellscriptImage(buildah, inputs.repoRoot, scratch),
    );
    const nvidia = inputs.upstreamDir
      ? await timed(logger, `NVIDIA's packages from ${inputs.upstreamDir}`, () =>
          buildNvidiaPackageImages(buildah, inputs.upstreamDir!, scratch, (m) => logger.info(m)),
        )
      : undefined;
    const built: BuiltImages = { skyhook, shellscript, shellscriptUpstream: shellscript };
    const setDir = join(cacheDir, inputs.setKey);
    const partial = `${setDir}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    await timed(logger, 'export the project images', () =>
      exportImages(buildah, built, ['skyhook', 'shellscript', 'shellscriptUpstream'], partial),
    );
    const nvidiaImages = await timed(logger, "export NVIDIA's package images", () =>
      exportNvidiaImages(buildah, nvidia, shellscript, partial),
    );
    for (const name of NODE_IMAGES.filter((image) => BASE_IMAGES.includes(image))) {
      linkOrCopy(join(baseDir, archiveFileName(name)), join(partial, archiveFileName(name)));
    }
    const described = describeSet(inputs.setKey, partial, nvidiaImages);
    writeFileSync(
      join(partial, 'images.json'),
      JSON.stringify({ ...described, dir: undefined, archives: undefined }, null, 2),
    );
    renameSync(partial, setDir);
    const set = readImageSet(setDir)!;
    await timed(logger, 'prune superseded images and cache entries', async () => {
      await buildah.pruneUntagged();
      pruneOldDirs(cacheDir, /^[0-9a-f]{16}$/);
      pruneOldDirs(cacheDir, /^base-[0-9a-f]{16}$/);
      removeLeftoversOfDeadBuilds(cacheDir, scratch);
    });
    return set;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The image set of this checkout: from the cache when its key is there, else built (under a lock). */
export async function ensureImages(options: EnsureImagesOptions = {}): Promise<ImageSet> {
  const repoRoot = options.repoRoot ?? thisRepoRoot;
  const cacheDir = options.cacheDir ?? defaultImageCacheDir();
  const logger = (options.logger ?? silentLogger()).child({ component: 'images' });
  const started = performance.now();
  await runCommand('bash', [
    join(repoRoot, 'tools/ensure-system-packages.sh'),
    'building images (npm run images)',
    ...BUILD_PACKAGES,
  ]);
  const inputs = await gatherBuildInputs(repoRoot);
  const cached = readImageSet(join(cacheDir, inputs.setKey));
  const notice = standInNotice(cached?.nvidiaPackages ?? []);
  if (notice) logger.warn(notice);
  if (cached) {
    markUsed(cached.dir);
    logger.info(
      { key: inputs.setKey, dir: cached.dir, durationMs: Math.round(performance.now() - started) },
      `images up to date (key ${inputs.setKey}): nothing to build`,
    );
    return cached;
  }
  const lock = await acquireCacheLock(join(cacheDir, '.lock'), () =>
    logger.info('another image build holds the cache lock; waiting for it'),
  );
  try {
    // Whoever held the lock may just have built this very key.
    const builtMeanwhile = readImageSet(join(cacheDir, inputs.setKey));
    if (builtMeanwhile) return builtMeanwhile;
    logger.info({ key: inputs.setKey, baseKey: inputs.baseKey, cacheDir }, `building images for key ${inputs.setKey}`);
    const set = await buildSet(inputs, cacheDir, logger);
    const builtNotice = standInNotice(set.nvidiaPackages);
    if (builtNotice) logger.warn(builtNotice);
    logger.info(
      { key: set.key, dir: set.dir, durationMs: Math.round(performance.now() - started) },
      `images built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    return set;
  } finally {
    await lock.release();
  }
}
