/** Policies, keys and Skyhooks for the trust tests. */
import { generateKeyPairSync } from 'node:crypto';
import type { PackageTrustPolicy, PackageTrustPolicySpec } from '../../../../src/api/package-trust-policy.js';

/** A P-256 public key in PEM, as cosign.pub holds one. */
export function publicKeyPem(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString();
}

export const KEY_A = publicKeyPem();
export const KEY_B = publicKeyPem();

export function trustPolicy(name: string, spec: PackageTrustPolicySpec, generation = 1): PackageTrustPolicy {
  return {
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'PackageTrustPolicy',
    metadata: { name, generation },
    spec,
  };
}

/** One policy: images under `prefix` signed by key `a` (KEY_A). */
export function policyFor(prefix: string, mode: 'Enforce' | 'Warn' = 'Enforce', name = 'trusted'): PackageTrustPolicy {
  return trustPolicy(name, {
    mode,
    keys: [
      { name: 'a', publicKey: KEY_A },
      { name: 'b', publicKey: KEY_B },
    ],
    images: [{ prefix, keys: ['a'] }],
  });
}

export const DIGEST = `sha256:${'ab'.repeat(32)}`;
