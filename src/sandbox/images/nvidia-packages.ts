/**
 * NVIDIA's published package images, built here from their package directories exactly as their
 * Dockerfiles build them (`FROM busybox`, `COPY . /skyhook-package`; nvidia-tuned `FROM` the tuned
 * image, then `chmod +x` of its scripts) and tagged with NVIDIA's names, so nodes without a registry
 * run what `ghcr.io/nvidia/skyhook-packages` serves. The directories are test data beside the
 * repository (`../shared/upstream-packages`, or $SKYHOOK_UPSTREAM_PACKAGES), never project content.
 * Without them only shellscript gets an offline stand-in under NVIDIA's name: the project's own
 * packages/shellscript, which says so when a sandbox starts.
 */
import { cpSync, existsSync, lstatSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Buildah } from './buildah.js';
import { hashFiles } from './content-key.js';

export const NVIDIA_REGISTRY = 'ghcr.io/nvidia/skyhook-packages';

export interface NvidiaPackage {
  name: string;
  tag: string;
  /** Under the upstream directory: the release-tag tree the published image was built from. */
  dir: string;
}

/** In build order: nvidia-tuned's Dockerfile starts FROM the tuned image. */
export const NVIDIA_PACKAGES: readonly NvidiaPackage[] = [
  { name: 'shellscript', tag: '1.1.1', dir: 'at-release-tags/shellscript-1.1.1' },
  { name: 'tuning', tag: '1.1.4', dir: 'at-release-tags/tuning-1.1.4' },
  { name: 'tuned', tag: '1.2.0', dir: 'at-release-tags/tuned-1.2.0' },
  { name: 'nvidia-tuned', tag: '0.2.3', dir: 'at-release-tags/nvidia-tuned-0.2.3' },
  { name: 'kdump', tag: '1.1.0', dir: 'at-release-tags/kdump-1.1.0' },
];

export const nvidiaRef = (pkg: Pick<NvidiaPackage, 'name' | 'tag'>): string =>
  `${NVIDIA_REGISTRY}/${pkg.name}:${pkg.tag}`;
export const nvidiaArchive = (pkg: Pick<NvidiaPackage, 'name'>): string => `nvidia-${pkg.name}.tar`;

/** Where NVIDIA's package directories are, or undefined when this checkout has none beside it. */
export function findUpstreamPackages(repoRoot: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = resolve(env['SKYHOOK_UPSTREAM_PACKAGES'] ?? join(repoRoot, '../shared/upstream-packages'));
  return NVIDIA_PACKAGES.every((pkg) => existsSync(join(dir, pkg.dir, 'Dockerfile'))) ? dir : undefined;
}

/** Part of the image set's content key: the package trees, or `absent` (stand-in). */
export function upstreamPackagesKey(upstreamDir: string | undefined): string {
  return upstreamDir
    ? hashFiles(
        upstreamDir,
        NVIDIA_PACKAGES.map((pkg) => pkg.dir),
      )
    : 'absent';
}

/** A git symlink checked out without symlink support: a small file holding only a relative path. */
function lostSymlinkTarget(path: string): string | undefined {
  const stats = lstatSync(path);
  if (!stats.isFile() || stats.size === 0 || stats.size > 255) return undefined;
  const text = readFileSync(path, 'utf8');
  return /^\.\.?\/[^\s]+$/.test(text) ? text : undefined;
}

/**
 * Copies a package directory into `target` as the build context, turning back into symlinks the
 * git symlinks (nvidia-tuned's profiles/os/…) that a checkout without symlink support wrote as
 * files holding their target. Returns the paths restored.
 */
export function stageBuildContext(source: string, target: string): string[] {
  rmSync(target, { recursive: true, force: true });
  cpSync(source, target, { recursive: true, verbatimSymlinks: true });
  const restored: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      const linkTarget = entry.isFile() ? lostSymlinkTarget(path) : undefined;
      if (linkTarget === undefined) continue;
      rmSync(path);
      symlinkSync(linkTarget, path);
      restored.push(path.slice(target.length + 1));
    }
  };
  if (existsSync(join(target, 'profiles'))) walk(join(target, 'profiles'));
  return restored;
}

/** Builds every NVIDIA package image from `upstreamDir`; returns image IDs by package name. */
export async function buildNvidiaPackageImages(
  buildah: Buildah,
  upstreamDir: string,
  scratchDir: string,
  say: (message: string) => void,
): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const pkg of NVIDIA_PACKAGES) {
    const context = join(scratchDir, `nvidia-${pkg.name}`);
    const restored = stageBuildContext(join(upstreamDir, pkg.dir), context);
    if (restored.length > 0)
      say(
        `${nvidiaRef(pkg)}: ${restored.length} git symlinks of the checkout restored (written as files holding their target)`,
      );
    ids[pkg.name] = await buildah.bud({
      scratchDir,
      contextDir: context,
      dockerfile: join(context, 'Dockerfile'),
      tags: [nvidiaRef(pkg)],
    });
    rmSync(context, { recursive: true, force: true });
  }
  return ids;
}

/** An NVIDIA package image of an image set. */
export interface NvidiaImage {
  name: string;
  ref: string;
  archive: string;
  /** True when it is the offline stand-in (the project's shellscript), not built from NVIDIA's files. */
  standIn: boolean;
}

/**
 * Writes the NVIDIA package archives into `dir`: the built images, or (no upstream directory) the
 * shellscript stand-in made from the project's shellscript image `shellscriptId`.
 */
export async function exportNvidiaImages(
  buildah: Buildah,
  built: Record<string, string> | undefined,
  shellscriptId: string,
  dir: string,
): Promise<NvidiaImage[]> {
  const images: NvidiaImage[] = [];
  for (const pkg of NVIDIA_PACKAGES) {
    const id = built ? built[pkg.name] : pkg.name === 'shellscript' ? shellscriptId : undefined;
    if (!id) continue;
    await buildah.exportArchive(id, nvidiaRef(pkg), join(dir, nvidiaArchive(pkg)));
    images.push({ name: pkg.name, ref: nvidiaRef(pkg), archive: nvidiaArchive(pkg), standIn: !built });
  }
  return images;
}

/** What a sandbox says when it starts with the stand-in. */
export function standInNotice(images: readonly NvidiaImage[]): string | undefined {
  const standIns = images.filter((image) => image.standIn).map((image) => image.ref);
  if (standIns.length === 0) return undefined;
  return `${standIns.join(', ')} is an offline stand-in (the project's packages/shellscript), not NVIDIA's image: NVIDIA's package directories were not found beside the checkout (../shared/upstream-packages; set SKYHOOK_UPSTREAM_PACKAGES); the other NVIDIA packages are not available on the nodes`;
}
