/**
 * Content keys of the image cache: a hash over everything a build reads (files of the repository,
 * versions of the tools, the recipe itself), so an unchanged checkout finds its images without
 * building, and any change to an input gives a new key. Files are hashed by path, executable bit
 * and content (symlinks by target); a path that does not exist counts as "absent", so adding it
 * changes the key too.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/** What the project's Dockerfiles COPY, plus the files that decide how (the build context's inputs). */
export const PROJECT_IMAGE_INPUTS = [
  'Dockerfile',
  '.dockerignore',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/bundle-operator.ts',
  'src',
  'bin',
  'packages',
] as const;

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** One line per file under `relativePath` (recursively), sorted by path. */
function describeTree(root: string, relativePath: string, lines: string[]): void {
  const absolute = join(root, relativePath);
  const stats = lstatOrUndefined(absolute);
  if (!stats) {
    lines.push(`${relativePath}\tabsent`);
  } else if (stats.isSymbolicLink()) {
    lines.push(`${relativePath}\tsymlink\t${readlinkSync(absolute)}`);
  } else if (stats.isDirectory()) {
    for (const name of readdirSync(absolute).sort()) describeTree(root, join(relativePath, name), lines);
  } else if (stats.isFile()) {
    const executable = (stats.mode & 0o111) !== 0 ? 'x' : '-';
    lines.push(`${relativePath}\t${executable}\t${createHash('sha256').update(readFileSync(absolute)).digest('hex')}`);
  }
}

/** sha256 over the files at `relativePaths` under `root`. */
export function hashFiles(root: string, relativePaths: readonly string[]): string {
  const lines: string[] = [];
  for (const path of [...relativePaths].sort()) describeTree(root, path, lines);
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/** A short stable key of named parts (order of the names does not matter). */
export function contentKey(parts: Readonly<Record<string, string>>): string {
  const canonical = Object.keys(parts)
    .sort()
    .map((name) => `${name}=${parts[name]}`)
    .join('\n');
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}
