/**
 * The PackageTrustPolicies in the operator: the informer the Skyhook controller reads them from,
 * the checker that verifies package images (one per process, so every Skyhook shares its verdicts),
 * and the small controller that keeps each policy's status (policy-status.ts). An operator upgraded
 * without the CRD runs as before (no image is verified) and says so in its log.
 */
import { API_GROUP, API_VERSION, KINDS } from '../../api/names.js';
import { nameOf } from '../../api/object-meta.js';
import type { PackageTrustPolicy } from '../../api/package-trust-policy.js';
import { isNotFound } from '../../kube/client.js';
import { Controller } from '../../kube/controller.js';
import { CustomObjects } from '../../kube/custom-objects.js';
import type { Informer } from '../../kube/informer.js';
import { customResourcePath } from '../../kube/list-watch.js';
import type { ControllerFactory, OperatorRuntime, Stoppable } from '../../kube/runtime.js';
import { ignoreNotFound } from '../../kube/writes.js';
import type { VerifyImageSignature } from '../../signing/verdict.js';
import { sameJson } from '../../util/json-equal.js';
import { PackageTrustChecker } from './package-trust.js';
import { trustPolicyStatus } from './policy-status.js';
import { readRegistrySettings, type RegistrySettings, registryAccessFor } from './registry-access.js';

const RESOURCE = { group: API_GROUP, version: API_VERSION, plural: KINDS.packageTrustPolicy.plural };

/** Is the PackageTrustPolicy kind served? */
async function policiesServed(runtime: OperatorRuntime): Promise<boolean> {
  try {
    await runtime.clients.custom.listClusterCustomObject({ ...RESOURCE, limit: 1 });
    return true;
  } catch (e) {
    if (!isNotFound(e)) throw e;
    runtime.logger.warn(
      { crd: `${RESOURCE.plural}.${API_GROUP}` },
      'the PackageTrustPolicy CRD is not installed: package images are not verified until it is and the operator restarts',
    );
    return false;
  }
}

/** The policies' informer (shared with the status controller through the runtime's factory). */
export async function trustPolicyInformer(
  runtime: OperatorRuntime,
  syncTimeoutMs: number,
): Promise<Informer<PackageTrustPolicy> | undefined> {
  if (!(await policiesServed(runtime))) return undefined;
  const informer = runtime.informers.informer<PackageTrustPolicy>(
    customResourcePath(API_GROUP, API_VERSION, RESOURCE.plural),
  );
  await informer.waitForSync(syncTimeoutMs);
  return informer;
}

export interface TrustCheckerOptions {
  namespace: string;
  operatorPullSecret: string;
  /** The image-signature verifier (src/signing/). */
  verify: VerifyImageSignature;
  /** Mirrors and CA; default: REGISTRY_MIRRORS and REGISTRY_CA_FILE from the environment. */
  registry?: RegistrySettings;
}

/** The checker, with registry access from REGISTRY_MIRRORS, REGISTRY_CA_FILE and the pull secrets. */
export function trustChecker(runtime: OperatorRuntime, options: TrustCheckerOptions): PackageTrustChecker {
  const registry = options.registry ?? readRegistrySettings(process.env);
  return new PackageTrustChecker({
    verify: options.verify,
    accessFor: (secrets) => registryAccessFor(runtime.clients.core, options.namespace, secrets, registry),
    operatorPullSecret: options.operatorPullSecret,
    now: Date.now,
  });
}

export async function startTrustPolicyController(runtime: OperatorRuntime): Promise<Stoppable> {
  const policies = await trustPolicyInformer(runtime, 120_000);
  if (policies === undefined) return { stop: async () => undefined };
  const objects = new CustomObjects<PackageTrustPolicy>(runtime.clients.custom, RESOURCE);
  const controller = new Controller({
    name: 'package-trust-policy',
    reconcile: async (key) => {
      const policy = policies.get(key);
      if (!policy || policy.metadata.deletionTimestamp) return;
      const status = trustPolicyStatus(policy, Date.now());
      if (!sameJson(status, policy.status)) await ignoreNotFound(objects.patchStatus(nameOf(policy), status));
    },
    workers: 1,
    logger: runtime.logger,
    metrics: runtime.metrics,
  });
  controller.watch(policies);
  controller.start();
  return controller;
}

export function trustPolicyControllerFactory(): ControllerFactory {
  return { name: 'package-trust-policy', start: startTrustPolicyController };
}
