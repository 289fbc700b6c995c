/**
 * From what the signature layers showed to the verdict (pure): the contract's reasons, each with a
 * message naming the image, what is wrong and what the administrator does next.
 */
import type { SignatureVerdict } from './verdict.js';

/** What one signature layer turned out to be. */
export type LayerFinding =
  | { readonly kind: 'trusted'; readonly keyName: string; readonly signedDigest: string | undefined }
  | { readonly kind: 'untrusted' }
  /** Its blob was not the content its digest names, or too large to be a payload. */
  | { readonly kind: 'invalid'; readonly why: string };

export function verdictFor(image: string, digest: string, findings: readonly LayerFinding[]): SignatureVerdict {
  const trusted = findings.filter((f): f is Extract<LayerFinding, { kind: 'trusted' }> => f.kind === 'trusted');
  const match = trusted.find((f) => f.signedDigest === digest);
  if (match) return { kind: 'verified', digest, keyName: match.keyName };
  const other = trusted[0];
  if (other) {
    const named = other.signedDigest ? `names ${other.signedDigest}` : 'names no image digest';
    return {
      kind: 'refused',
      reason: 'digest-mismatch',
      digest,
      message:
        `image ${image} resolves to ${digest}, but its signature by trusted key "${other.keyName}" ${named}: ` +
        'the tag was moved or the signature copied; sign this digest, or pin the package to the digest that was signed',
    };
  }
  if (findings.length === 0) return unsigned(image, digest);
  const invalid = findings.find((f): f is Extract<LayerFinding, { kind: 'invalid' }> => f.kind === 'invalid');
  return {
    kind: 'refused',
    reason: 'unknown-key',
    digest,
    message:
      `image ${image} (${digest}) has ${findings.length} signature(s), none by a trusted key` +
      (invalid ? ` (one is unreadable: ${invalid.why})` : '') +
      ": sign it with a trusted key, or trust the signer's public key in the policy",
  };
}

export function unsigned(image: string, digest: string): SignatureVerdict {
  return {
    kind: 'refused',
    reason: 'unsigned',
    digest,
    message:
      `image ${image} (${digest}) has no cosign signature (no tag ${digest.replace(':', '-')}.sig): ` +
      'sign it with `cosign sign --key cosign.key` (key-pair, .sig-tag format) and push the signature to the same repository',
  };
}

/** The registry could not be asked; `status` is the HTTP status when it answered. */
export function unreachable(
  image: string,
  what: string,
  status: number | undefined,
  digest?: string,
): SignatureVerdict {
  return {
    kind: 'refused',
    reason: 'unreachable',
    ...(digest ? { digest } : {}),
    message: `image ${image}: ${what}; ${adviceFor(status)}`,
  };
}

function adviceFor(status: number | undefined): string {
  if (status === undefined || status === 0)
    return 'check the registry host (or its mirror), the network, and that its TLS certificate is trusted (extra CA)';
  if (status === 401 || status === 403)
    return `the registry refused the credentials (HTTP ${status}): check the pull secret's username and password for that registry`;
  if (status === 404)
    return 'the registry has no such repository or tag (HTTP 404): check the image name and that the tag was pushed';
  if (status === 429) return 'the registry is rate-limiting (HTTP 429): retry later, or use a mirror or credentials';
  return `the registry answered HTTP ${status}: check the registry's health and retry`;
}
