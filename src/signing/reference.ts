/**
 * Image references as the registry API needs them: which registry host (for credentials and
 * mirrors), which repository path, and a tag or a digest. Docker Hub's short names are made whole
 * (`busybox` → docker.io/library/busybox), as containerd does.
 */

export interface ImageReference {
  /** The registry the name points at (`ghcr.io`, `docker.io`, `127.0.0.1:5000`). */
  readonly registry: string;
  /** The repository inside it (`nvidia/skyhook-packages/shellscript`). */
  readonly repository: string;
  readonly tag?: string;
  /** `sha256:<hex>` when the reference pins one. */
  readonly digest?: string;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

export function parseImageReference(image: string): ImageReference {
  const trimmed = image.trim();
  let rest = trimmed;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest))
      throw new Error(`image "${image}": the digest after @ must be sha256:<64 lowercase hex digits>`);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const slash = rest.indexOf('/');
  const first = slash < 0 ? '' : rest.slice(0, slash);
  const hasHost = first.includes('.') || first.includes(':') || first === 'localhost';
  const registry = hasHost ? first : 'docker.io';
  let repository = hasHost ? rest.slice(slash + 1) : rest;
  if (registry === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  if (!repository || !/^[a-z0-9]+(?:[._/-]+[a-z0-9]+)*$/.test(repository))
    throw new Error(`image "${image}": "${repository}" is not a repository name (lowercase, digits, . _ - /)`);
  if (tag !== undefined && !/^\w[\w.-]{0,127}$/.test(tag))
    throw new Error(`image "${image}": "${tag}" is not a tag (letters, digits, _ . -; at most 128)`);
  if (tag === undefined && digest === undefined) tag = 'latest';
  return { registry, repository, ...(tag !== undefined ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** The base URL of a registry's API: the mirror when one is configured, Docker Hub's API host for docker.io. */
export function registryBaseUrl(registry: string, mirrors: Readonly<Record<string, string>> = {}): string {
  const mirror = mirrors[registry];
  if (mirror) return mirror.replace(/\/+$/, '').replace(/\/v2$/, '');
  if (registry === 'docker.io') return 'https://registry-1.docker.io';
  return `https://${registry}`;
}

/** `host:port` of a URL, as credentials are keyed. */
export function hostOf(url: string): string {
  return new URL(url).host;
}

/** The tag under which cosign stores the signatures of a manifest digest (`sha256-<hex>.sig`). */
export function signatureTag(digest: string): string {
  return `${digest.replace(':', '-')}.sig`;
}
