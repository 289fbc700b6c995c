/**
 * Where the tests find an upstream tool `npm run cluster:build` builds from its Go module
 * (tools/lib/build-go-tool.sh): the path in its override variable when set, else
 * <cache>/bin/<tool>-<version>/<tool> at the version tools/versions.env pins.
 */
import { accessSync, constants, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from '../src/sandbox/binaries.js';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The version tools/versions.env pins in `variable` (e.g. HELM_VERSION). */
export function pinnedVersion(variable: string): string {
  const match = new RegExp(`^${variable}=(\\S+)$`, 'm').exec(
    readFileSync(join(REPO_ROOT, 'tools/versions.env'), 'utf8'),
  );
  if (!match) throw new Error(`tools/versions.env does not define ${variable}`);
  return match[1]!;
}

export interface CachedTool {
  /** The binary's name, also its cache folder's prefix. */
  name: string;
  /** The tools/versions.env variable that pins it. */
  versionVariable: string;
  /** The environment variable that names another binary instead. */
  overrideVariable: string;
}

export function findCachedTool(tool: CachedTool, env: NodeJS.ProcessEnv = process.env): string {
  const path =
    env[tool.overrideVariable] ||
    join(cacheRoot(env), 'bin', `${tool.name}-${pinnedVersion(tool.versionVariable)}`, tool.name);
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    throw new Error(`${tool.name} not found at ${path}: run \`npm run cluster:build\` (builds it from its Go module)`);
  }
}
