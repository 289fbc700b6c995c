/**
 * Checks a cosign signature over a payload against trusted public keys with node:crypto. cosign's
 * key pairs are ECDSA P-256 with SHA-256 (DER signatures); keys it imports may be RSA (PKCS#1 v1.5,
 * SHA-256) or Ed25519 (no separate hash): each is checked the way its type is signed.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { TrustedKey } from './verdict.js';

export interface LoadedKey {
  readonly name: string;
  readonly key: KeyObject;
}

/** Parses each key's PEM; throws naming the key that is not a public key. */
export function loadTrustedKeys(keys: readonly TrustedKey[]): LoadedKey[] {
  return keys.map(({ name, publicKeyPem }) => {
    try {
      const key = createPublicKey(publicKeyPem);
      return { name, key };
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new Error(
        `trusted key "${name}" is not a PEM public key (${why}): give the cosign.pub that \`cosign generate-key-pair\` wrote`,
      );
    }
  });
}

/** The hash the signature is made over, by key type (Ed25519 and Ed448 sign the message itself). */
function hashFor(key: KeyObject): string | null {
  const type = key.asymmetricKeyType;
  return type === 'ed25519' || type === 'ed448' ? null : 'sha256';
}

/** The name of the first key whose signature `signatureBase64` over `payload` is; undefined for none. */
export function signingKeyOf(
  payload: Uint8Array,
  signatureBase64: string,
  keys: readonly LoadedKey[],
): string | undefined {
  const signature = Buffer.from(signatureBase64, 'base64');
  if (signature.length === 0) return undefined;
  for (const { name, key } of keys) {
    try {
      if (verify(hashFor(key), payload, key, signature)) return name;
    } catch {
      // A signature malformed for this key type is simply not this key's.
    }
  }
  return undefined;
}
