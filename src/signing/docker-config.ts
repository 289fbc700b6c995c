/**
 * Registry credentials from a dockerconfigjson (the `.dockerconfigjson` of an image pull secret, or
 * ~/.docker/config.json): `auths` keyed by registry host, each with `auth` (base64 `user:password`)
 * or `username` and `password`. Keys may carry a scheme and path (`https://index.docker.io/v1/`).
 */
import type { RegistryCredentials } from './verdict.js';

/** `host[:port]` of an `auths` key; Docker Hub's historical names become `docker.io`. */
export function normalizeRegistryHost(key: string): string {
  const host = key
    .trim()
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/\/.*$/, '')
    .toLowerCase();
  return host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host;
}

/** Credentials by host; throws naming the entry that holds none. */
export function credentialsFromDockerConfig(
  json: string,
  source = 'dockerconfigjson',
): Map<string, RegistryCredentials> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new Error(`${source} is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const auths = isRecord(parsed) ? parsed['auths'] : undefined;
  if (!isRecord(auths)) throw new Error(`${source} has no "auths" object: give a dockerconfigjson ({"auths": {...}})`);
  const result = new Map<string, RegistryCredentials>();
  for (const [key, entry] of Object.entries(auths)) {
    const credentials = isRecord(entry) ? entryCredentials(entry) : undefined;
    if (!credentials)
      throw new Error(`${source}: auths["${key}"] has neither "auth" (base64 user:password) nor username and password`);
    result.set(normalizeRegistryHost(key), credentials);
  }
  return result;
}

function entryCredentials(entry: Record<string, unknown>): RegistryCredentials | undefined {
  const { auth, username, password } = entry;
  if (typeof auth === 'string' && auth) {
    const decoded = Buffer.from(auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  if (typeof username === 'string' && typeof password === 'string') return { username, password };
  return undefined;
}

/** A RegistryAccess.credentialsFor over a host map (hosts compared normalized). */
export function credentialsLookup(byHost: ReadonlyMap<string, RegistryCredentials>) {
  return (registryHost: string): RegistryCredentials | undefined => byHost.get(normalizeRegistryHost(registryHost));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
