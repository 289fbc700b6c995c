/**
 * What the sandbox's OCI registry and the nodes that pull from it are configured with (pure):
 * Distribution's config file, the htpasswd line of a user, a registry path for an image reference,
 * and containerd's hosts.toml making the registry the mirror of the public registries.
 */

/** Registries whose images the sandbox serves from its own registry, as an air-gapped cluster does. */
export const MIRRORED_REGISTRIES = ['ghcr.io', 'docker.io', 'registry.k8s.io'] as const;

/** Inside a real node the registry is at this address (relayed to the machine's registry, as the API server is). */
export const NODE_REGISTRY_ADDRESS = '127.0.0.1:5000';

export interface RegistryConfigInput {
  port: number;
  storageDir: string;
  certFile: string;
  keyFile: string;
  /** Basic auth from this htpasswd file; none: anyone on the loopback may pull and push. */
  htpasswdFile?: string;
}

/** Distribution's configuration: loopback only, TLS, basic auth (bcrypt htpasswd) if asked, filesystem storage. */
export function registryConfig(input: RegistryConfigInput): string {
  return `version: 0.1
log:
  level: info
  formatter: text
storage:
  filesystem:
    rootdirectory: ${JSON.stringify(input.storageDir)}
  delete:
    enabled: false
http:
  addr: 127.0.0.1:${input.port}
  tls:
    certificate: ${JSON.stringify(input.certFile)}
    key: ${JSON.stringify(input.keyFile)}
  headers:
    X-Content-Type-Options: [nosniff]
${input.htpasswdFile ? authSection(input.htpasswdFile) : ''}`;
}

function authSection(htpasswdFile: string): string {
  return `auth:
  htpasswd:
    realm: skyhook-sandbox
    path: ${JSON.stringify(htpasswdFile)}
`;
}

/** One htpasswd line; Distribution accepts bcrypt hashes only. */
export function htpasswdLine(user: string, bcryptHash: string): string {
  if (!/^[^:\s]+$/.test(user)) throw new Error(`registry user "${user}": no colon or whitespace allowed`);
  return `${user}:${bcryptHash}\n`;
}

/**
 * Where an image reference lives in the sandbox registry: its path without the registry host (a
 * mirror is asked for `nvidia/x`, not `ghcr.io/nvidia/x`), Docker Hub's short names made whole.
 */
export function registryPath(ref: string): string {
  const slash = ref.indexOf('/');
  const first = slash < 0 ? '' : ref.slice(0, slash);
  const hasHost = first.includes('.') || first.includes(':') || first === 'localhost';
  const path = hasHost ? ref.slice(slash + 1) : ref;
  const host = hasHost ? first : 'docker.io';
  return host === 'docker.io' && !path.includes('/') ? `library/${path}` : path;
}

/**
 * containerd's hosts.toml for one mirrored registry: every pull goes to the sandbox registry, as the
 * mirror (`host`, which containerd 1.6 requires) and as the `server` too, so that nothing is tried
 * outside (as in an air-gapped cluster) and a missing tag reads "not found", not a DNS failure;
 * both trust the sandbox's CA.
 */
export function mirrorHostsToml(caPath: string): string {
  const registry = `https://${NODE_REGISTRY_ADDRESS}`;
  return `# The sandbox's registry serves this registry's images: nothing is pulled from outside.
server = "${registry}"
ca = "${caPath}"
capabilities = ["pull", "resolve"]

[host."${registry}"]
  ca = "${caPath}"
  capabilities = ["pull", "resolve"]
`;
}
