/**
 * The parts of signature verification that need no registry: cosign's `.sig` manifest layers, the
 * payload's digest, the signature check against keys made here with node:crypto (ECDSA P-256 as
 * cosign's key pairs, Ed25519, RSA), and the verdict each combination maps to.
 */
import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import {
  SIGNATURE_ANNOTATION,
  sha256Digest,
  signatureLayers,
  signedManifestDigest,
} from '../../../src/signing/cosign-format.js';
import { loadTrustedKeys, signingKeyOf } from '../../../src/signing/signature-check.js';
import { unreachable, verdictFor } from '../../../src/signing/verdicts.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;
const OTHER = `sha256:${'b'.repeat(64)}`;

/** The simple-signing payload cosign writes for a digest. */
const payloadFor = (digest: string): Buffer =>
  Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': 'ghcr.io/example/pkg' },
        image: { 'docker-manifest-digest': digest },
        type: 'cosign container image signature',
      },
      optional: null,
    }),
  );

function keyPair(type: 'ec' | 'ed25519' | 'rsa'): { publicKeyPem: string; privateKey: KeyObject } {
  const pair =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : type === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : generateKeyPairSync('ed25519');
  return {
    publicKeyPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKey: pair.privateKey,
  };
}

const signWith = (privateKey: KeyObject, payload: Buffer): string =>
  sign(privateKey.asymmetricKeyType === 'ed25519' ? null : 'sha256', payload, privateKey).toString('base64');

describe('cosign signature layers and payloads', () => {
  it('reads the annotated layers of a .sig manifest and skips the rest', () => {
    const payload = payloadFor(DIGEST);
    const manifest = {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      layers: [
        { digest: sha256Digest(payload), size: payload.length, annotations: { [SIGNATURE_ANNOTATION]: 'c2ln' } },
        { digest: `sha256:${'c'.repeat(64)}`, size: 3 },
        { digest: 'md5:abc', size: 3, annotations: { [SIGNATURE_ANNOTATION]: 'eA==' } },
      ],
    };
    expect(signatureLayers(manifest)).toEqual([
      { digest: sha256Digest(payload), size: payload.length, signature: 'c2ln' },
    ]);
    expect(signatureLayers({ layers: 'no' })).toEqual([]);
    expect(signatureLayers(null)).toEqual([]);
  });

  it("names the payload's manifest digest, and nothing for what is not cosign's JSON", () => {
    expect(signedManifestDigest(payloadFor(DIGEST))).toBe(DIGEST);
    expect(signedManifestDigest(Buffer.from('not json'))).toBeUndefined();
    expect(signedManifestDigest(Buffer.from('{"critical":{"image":{}}}'))).toBeUndefined();
  });

  it('computes the registry digest of bytes', () => {
    expect(sha256Digest(Buffer.from(''))).toBe(
      'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });
});

describe('the signature check', () => {
  it.each(['ec', 'ed25519', 'rsa'] as const)('accepts a %s signature by a trusted key and names the key', (type) => {
    const signer = keyPair(type);
    const stranger = keyPair(type);
    const keys = loadTrustedKeys([
      { name: 'stranger', publicKeyPem: stranger.publicKeyPem },
      { name: 'release', publicKeyPem: signer.publicKeyPem },
    ]);
    const payload = payloadFor(DIGEST);
    expect(signingKeyOf(payload, signWith(signer.privateKey, payload), keys)).toBe('release');
  });

  it('refuses a signature by another key, over other bytes, or malformed', () => {
    const signer = keyPair('ec');
    const keys = loadTrustedKeys([{ name: 'release', publicKeyPem: keyPair('ec').publicKeyPem }]);
    const payload = payloadFor(DIGEST);
    expect(signingKeyOf(payload, signWith(signer.privateKey, payload), keys)).toBeUndefined();
    const own = loadTrustedKeys([{ name: 'release', publicKeyPem: signer.publicKeyPem }]);
    expect(signingKeyOf(payloadFor(OTHER), signWith(signer.privateKey, payload), own)).toBeUndefined();
    expect(signingKeyOf(payload, 'bm90IGEgc2lnbmF0dXJl', own)).toBeUndefined();
    expect(signingKeyOf(payload, '', own)).toBeUndefined();
  });

  it('names the key that is not a PEM public key', () => {
    expect(() => loadTrustedKeys([{ name: 'broken', publicKeyPem: 'hello' }])).toThrow(
      /trusted key "broken".*cosign\.pub/,
    );
  });
});

describe('the verdict', () => {
  const image = 'ghcr.io/example/pkg:1.0';

  it('is verified by a trusted signature over the digest, naming key and digest', () => {
    const verdict = verdictFor(image, DIGEST, [
      { kind: 'untrusted' },
      { kind: 'trusted', keyName: 'release', signedDigest: DIGEST },
    ]);
    expect(verdict).toEqual({ kind: 'verified', digest: DIGEST, keyName: 'release' });
  });

  it('is digest-mismatch when the only trusted signature names another digest', () => {
    const verdict = verdictFor(image, DIGEST, [{ kind: 'trusted', keyName: 'release', signedDigest: OTHER }]);
    expect(verdict).toMatchObject({ kind: 'refused', reason: 'digest-mismatch', digest: DIGEST });
    if (verdict.kind === 'refused') expect(verdict.message).toContain(OTHER);
  });

  it('is unknown-key when signatures exist but none by a trusted key', () => {
    const verdict = verdictFor(image, DIGEST, [{ kind: 'untrusted' }, { kind: 'invalid', why: 'blob x' }]);
    expect(verdict).toMatchObject({ kind: 'refused', reason: 'unknown-key', digest: DIGEST });
    if (verdict.kind === 'refused') expect(verdict.message).toMatch(/2 signature\(s\), none by a trusted key/);
  });

  it('is unsigned when there is no signature, naming the .sig tag', () => {
    const verdict = verdictFor(image, DIGEST, []);
    expect(verdict).toMatchObject({ kind: 'refused', reason: 'unsigned', digest: DIGEST });
    if (verdict.kind === 'refused') expect(verdict.message).toContain(`sha256-${'a'.repeat(64)}.sig`);
  });

  it('is unreachable with the HTTP status and what to check', () => {
    const denied = unreachable(image, 'the registry answered HTTP 401', 401);
    expect(denied).toMatchObject({ kind: 'refused', reason: 'unreachable' });
    if (denied.kind === 'refused') expect(denied.message).toMatch(/HTTP 401.*pull secret/);
    const silent = unreachable(image, 'no answer (ECONNREFUSED)', undefined);
    if (silent.kind === 'refused') expect(silent.message).toMatch(/TLS certificate is trusted/);
  });
});
