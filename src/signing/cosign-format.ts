/**
 * cosign's classic signature format (pure): under the tag `sha256-<hex>.sig` of the signed manifest's
 * repository, an OCI manifest whose layers are the signed payloads, each layer carrying its
 * base64 signature in the annotation `dev.cosignproject.cosign/signature`. A payload is "simple
 * signing" JSON naming the signed manifest's digest in `critical.image.docker-manifest-digest`.
 */
import { createHash } from 'node:crypto';

export const SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';

/** Payloads are a few hundred bytes; a larger layer is not a signature this verifier reads. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

export const MANIFEST_ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

/** One signature layer of a `.sig` manifest. */
export interface SignatureLayer {
  /** The payload blob's digest (`sha256:<hex>`). */
  readonly digest: string;
  readonly size: number;
  /** The base64 signature over the payload's bytes. */
  readonly signature: string;
}

/** The signature layers of a `.sig` manifest (layers without the annotation are not signatures). */
export function signatureLayers(manifest: unknown): SignatureLayer[] {
  if (!isRecord(manifest) || !Array.isArray(manifest['layers'])) return [];
  return manifest['layers'].flatMap((layer: unknown): SignatureLayer[] => {
    if (!isRecord(layer) || !isRecord(layer['annotations'])) return [];
    const signature = layer['annotations'][SIGNATURE_ANNOTATION];
    const digest = layer['digest'];
    const size = layer['size'];
    if (typeof signature !== 'string' || typeof digest !== 'string' || typeof size !== 'number') return [];
    if (!/^sha256:[0-9a-f]{64}$/.test(digest)) return [];
    return [{ digest, size, signature }];
  });
}

/** The manifest digest a signed payload names; undefined when the payload is not cosign's JSON. */
export function signedManifestDigest(payload: Uint8Array): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(parsed) || !isRecord(parsed['critical'])) return undefined;
  const image = parsed['critical']['image'];
  if (!isRecord(image)) return undefined;
  const digest = image['docker-manifest-digest'];
  return typeof digest === 'string' ? digest : undefined;
}

/** `sha256:<hex>` of the bytes, as registries name content. */
export function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
