/**
 * How the signature verifier reaches registries: the same way the nodes' containerd does. Mirrors
 * (REGISTRY_MIRRORS, as the nodes' `certs.d/<registry>/hosts.toml`), an extra CA (REGISTRY_CA_FILE),
 * and the credentials of the pull secrets the stage pods use: IMAGE_PULL_SECRET first, then the
 * package's own imagePullSecrets, each a dockerconfigjson Secret in the operator's namespace.
 */
import { readFileSync } from 'node:fs';
import type { CoreV1Api } from '@kubernetes/client-node';
import { isNotFound } from '../../kube/client.js';
import { credentialsFromDockerConfig, credentialsLookup } from '../../signing/docker-config.js';
import type { RegistryAccess, RegistryCredentials } from '../../signing/verdict.js';

export interface RegistrySettings {
  /** Registry host → the URL that serves it (`ghcr.io` → `https://mirror:5000`). */
  readonly mirrors: Readonly<Record<string, string>>;
  /** PEM of REGISTRY_CA_FILE, trusted beside the system's CAs. */
  readonly caPem?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** `REGISTRY_MIRRORS=ghcr.io=https://host:port,docker.io=https://other`; throws naming the bad entry. */
export function parseRegistryMirrors(text: string): Record<string, string> {
  const mirrors: Record<string, string> = {};
  for (const entry of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^([^=\s/]+)=(https?:\/\/[^\s,]+)$/.exec(entry);
    if (!match)
      throw new Error(
        `REGISTRY_MIRRORS entry '${entry}' must be <registry host>=<https://mirror[:port]>, e.g. ghcr.io=https://mirror:5000`,
      );
    mirrors[match[1]!.toLowerCase()] = match[2]!.replace(/\/+$/, '');
  }
  return mirrors;
}

export function readRegistrySettings(env: Env, readFile: (path: string) => string = readUtf8): RegistrySettings {
  const mirrors = parseRegistryMirrors(env['REGISTRY_MIRRORS'] ?? '');
  const caFile = env['REGISTRY_CA_FILE'];
  if (!caFile) return { mirrors };
  let caPem: string;
  try {
    caPem = readFile(caFile);
  } catch (e) {
    throw new Error(`REGISTRY_CA_FILE '${caFile}' cannot be read (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!caPem.includes('-----BEGIN CERTIFICATE-----'))
    throw new Error(`REGISTRY_CA_FILE '${caFile}' holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return { mirrors, caPem };
}

const readUtf8 = (path: string): string => readFileSync(path, 'utf8');

/**
 * The access for a package: its pull secrets read now (the operator's first; a host in both keeps
 * the first's credentials). A secret that does not exist adds nothing, as for the kubelet; one that is
 * not a dockerconfigjson is an error naming it.
 */
export async function registryAccessFor(
  core: CoreV1Api,
  namespace: string,
  secretNames: readonly string[],
  settings: RegistrySettings,
): Promise<RegistryAccess> {
  const byHost = new Map<string, RegistryCredentials>();
  for (const name of new Set(secretNames.filter(Boolean))) {
    let data: Record<string, string> | undefined;
    try {
      data = (await core.readNamespacedSecret({ name, namespace })).data;
    } catch (e) {
      if (isNotFound(e)) continue;
      throw e;
    }
    const encoded = data?.['.dockerconfigjson'];
    if (encoded === undefined)
      throw new Error(
        `pull secret ${namespace}/${name} has no .dockerconfigjson: create it with kubectl create secret docker-registry`,
      );
    const json = Buffer.from(encoded, 'base64').toString('utf8');
    for (const [host, credentials] of credentialsFromDockerConfig(json, `pull secret ${namespace}/${name}`))
      if (!byHost.has(host)) byHost.set(host, credentials);
  }
  return {
    credentialsFor: credentialsLookup(byHost),
    mirrors: settings.mirrors,
    ...(settings.caPem ? { caPem: settings.caPem } : {}),
  };
}
