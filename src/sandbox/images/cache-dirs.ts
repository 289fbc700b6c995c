/**
 * Housekeeping of the image cache's directories (ensure-images.ts describes the layout): marking a
 * set as used, pruning sets nobody used for a day, removing what a dead build left, and hard-linking
 * archives between sets that share them.
 */
import { copyFileSync, linkSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

const DIRS_KEPT = 3;
const UNUSED_DIR_MAX_AGE_MS = 24 * 3600_000;

export function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

/**
 * Removes cache directories of one kind beyond the newest few that nobody used for a day. Several
 * checkouts (clones, branches) share the cache, each with its own key, and may be importing their
 * set right now: a set's mtime is refreshed on every use, so an active one is never removed.
 */
export function pruneOldDirs(cacheDir: string, pattern: RegExp): void {
  const dirs = readdirSync(cacheDir)
    .filter((name) => pattern.test(name))
    .map((name) => ({ path: join(cacheDir, name), mtime: statSync(join(cacheDir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  const unusedSince = Date.now() - UNUSED_DIR_MAX_AGE_MS;
  for (const old of dirs.slice(DIRS_KEPT).filter((dir) => dir.mtime < unusedSince))
    rmSync(old.path, { recursive: true, force: true });
}

/** Under the lock, any half-written set or scratch directory was left by a build that died. */
export function removeLeftoversOfDeadBuilds(cacheDir: string, ownScratch: string): void {
  for (const name of readdirSync(cacheDir)) {
    const path = join(cacheDir, name);
    if ((name.endsWith('.partial') || name.startsWith('scratch-')) && path !== ownScratch)
      rmSync(path, { recursive: true, force: true });
  }
}

export function markUsed(dir: string): void {
  const now = new Date();
  utimesSync(dir, now, now);
}
