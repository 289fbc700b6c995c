/**
 * `skyhook plan`'s view of the PackageTrustPolicies: the covered packages verified now, as the
 * operator would (same verifier, REGISTRY_MIRRORS and REGISTRY_CA_FILE from this environment, the
 * operator's pull secrets when the user may read them, anonymous otherwise), so a refused package
 * shows as the hold and condition the operator would write.
 */
import type { PackageTrustPolicy } from '../../api/package-trust-policy.js';
import type { Skyhook } from '../../api/skyhook.js';
import type { PackageTrustResults } from '../../controllers/skyhook/plan/package-trust.js';
import { PackageTrustChecker } from '../../controllers/trust/package-trust.js';
import { readRegistrySettings, registryAccessFor } from '../../controllers/trust/registry-access.js';
import { statusCode, type KubeClients } from '../../kube/client.js';
import type { VerifyImageSignature } from '../../signing/verdict.js';
import { verifyImageSignature } from '../../signing/verify.js';

export async function planPackageTrust(
  clients: KubeClients,
  namespace: string,
  skyhooks: readonly Skyhook[],
  policies: readonly PackageTrustPolicy[],
  verify: VerifyImageSignature = verifyImageSignature,
): Promise<PackageTrustResults | undefined> {
  if (policies.length === 0) return undefined;
  const registry = readRegistrySettings(process.env);
  const checker = new PackageTrustChecker({
    verify,
    accessFor: (secrets) =>
      registryAccessFor(clients.core, namespace, secrets, registry).catch((e: unknown) => {
        if (statusCode(e) === 403) return registryAccessFor(clients.core, namespace, [], registry);
        throw e;
      }),
    operatorPullSecret: process.env['IMAGE_PULL_SECRET'] ?? '',
    now: Date.now,
  });
  return (await checker.decide(skyhooks, policies)).results;
}
