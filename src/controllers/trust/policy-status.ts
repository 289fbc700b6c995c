/**
 * A PackageTrustPolicy's status (pure): observedGeneration, and Ready, True once every key of the
 * policy loads as a public key (the API server checks only that it looks like PEM), False naming
 * each key that does not and the fix. An image covered by a policy whose keys do not load cannot be
 * verified, so it is refused (Enforce) until the key is fixed.
 */
import { createPublicKey } from 'node:crypto';
import type { Condition } from '../../api/k8s-schemas.js';
import type { PackageTrustPolicy, PackageTrustPolicyStatus } from '../../api/package-trust-policy.js';

/** Why each key that does not load as a public key fails, `spec.keys[i] (<name>): <why>`. */
export function keyProblems(policy: PackageTrustPolicy): string[] {
  return policy.spec.keys.flatMap((key, index) => {
    try {
      createPublicKey(key.publicKey);
      return [];
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return [
        `spec.keys[${index}] (${key.name}) is not a public key (${why}): paste cosign.pub from cosign generate-key-pair`,
      ];
    }
  });
}

export function trustPolicyStatus(policy: PackageTrustPolicy, now: number): PackageTrustPolicyStatus {
  const generation = policy.metadata.generation;
  const problems = keyProblems(policy);
  const ready = problems.length === 0;
  const { keys, images } = policy.spec;
  const message = ready
    ? `${keys.length} key(s) loaded; ${images.length} image prefix(es) covered in ${policy.spec.mode ?? 'Enforce'} mode`
    : problems.join('; ');
  const status: 'True' | 'False' = ready ? 'True' : 'False';
  const previous = policy.status?.conditions?.find((c) => c.type === 'Ready');
  const condition: Condition = {
    type: 'Ready',
    status,
    reason: ready ? 'KeysLoaded' : 'InvalidKey',
    message,
    lastTransitionTime:
      previous?.status === status && previous.lastTransitionTime
        ? previous.lastTransitionTime
        : new Date(now).toISOString(),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  return { ...(generation !== undefined ? { observedGeneration: generation } : {}), conditions: [condition] };
}
