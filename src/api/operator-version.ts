/**
 * The operator's own version, as upstream writes its version: the release with a leading `v`
 * (upstream's operator v0.13.0 writes `v0.13.0`). Ours is package.json's version, read once, so
 * the release is named in one place; `OPERATOR_VERSION` in the environment overrides it.
 * It is stamped on each reconciled Skyhook (`skyhook.nvidia.com/version`) and on the nodes it
 * writes (`version_<skyhook>`).
 */
import { readFileSync } from 'node:fs';

/** package.json is two levels above this file both in src/ (tests) and in dist/ (the image). */
const PACKAGE_JSON = new URL('../../package.json', import.meta.url);

let cached: string | undefined;

export function packageVersion(): string {
  if (cached !== undefined) return cached;
  const parsed: unknown = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8'));
  const version = typeof parsed === 'object' && parsed !== null ? (parsed as { version?: unknown }).version : undefined;
  if (typeof version !== 'string' || version === '') throw new Error(`${PACKAGE_JSON.pathname} has no version`);
  cached = version;
  return version;
}

/** `v<version>`; a version that already starts with `v` is kept as it is. */
export function operatorVersion(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const version = env['OPERATOR_VERSION'] || packageVersion();
  return version.startsWith('v') ? version : `v${version}`;
}
