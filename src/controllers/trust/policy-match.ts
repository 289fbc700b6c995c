/**
 * Which PackageTrustPolicies cover a package image, and with which keys (pure). Within one policy
 * the longest matching prefix applies (a narrower entry overrides a broader one); across policies
 * every policy that covers the image applies and all must pass, so a second policy can only add a
 * requirement, never lift one. An image no policy covers runs as it always did.
 */
import type { PackageTrustPolicy, TrustMode } from '../../api/package-trust-policy.js';
import { nameOf } from '../../api/object-meta.js';
import type { TrustedKey } from '../../signing/verdict.js';

/** One policy's requirement on one image. */
export interface TrustRequirement {
  readonly policy: string;
  /** The policy's metadata.generation: a changed policy verifies again. */
  readonly generation: number;
  readonly mode: TrustMode;
  /** The prefix that matched (the longest of the policy's). */
  readonly prefix: string;
  readonly keys: readonly TrustedKey[];
}

/** The requirement of each policy that covers `image` (the package's `image`, without tag or digest). */
export function trustRequirements(image: string, policies: readonly PackageTrustPolicy[]): TrustRequirement[] {
  const requirements: TrustRequirement[] = [];
  for (const policy of policies) {
    if (policy.metadata.deletionTimestamp) continue;
    const entry = policy.spec.images
      .filter((candidate) => image.startsWith(candidate.prefix))
      .sort((a, b) => b.prefix.length - a.prefix.length)[0];
    if (entry === undefined) continue;
    const keys = policy.spec.keys
      .filter((key) => entry.keys.includes(key.name))
      .map((key) => ({ name: key.name, publicKeyPem: key.publicKey }));
    requirements.push({
      policy: nameOf(policy),
      generation: policy.metadata.generation ?? 0,
      mode: policy.spec.mode ?? 'Enforce',
      prefix: entry.prefix,
      keys,
    });
  }
  return requirements.sort((a, b) => (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0));
}
