/**
 * ajv validators compiled from the same schemas as the CRDs. They check structure, types, enums,
 * patterns and bounds, and fill in the defaults the API server would; the CEL rules (cross-field
 * checks) are enforced by the API server only, so a document ajv accepts may still be refused there.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { DEPLOYMENT_POLICY_DEFINITION, type DeploymentPolicy } from './deployment-policy.js';
import { PACKAGE_TRUST_POLICY_DEFINITION, type PackageTrustPolicy } from './package-trust-policy.js';
import { DISRUPTION_BUDGET_DEFINITION, type DisruptionBudget } from './disruption-budget.js';
import { MAINTENANCE_POLICY_DEFINITION, type MaintenancePolicy } from './maintenance-policy.js';
import { NODEOP_DEFINITION, type NodeOp } from './nodeop.js';
import { documentSchema, type ResourceDefinition } from './resource-definition.js';
import { SKYHOOK_DEFINITION, type Skyhook } from './skyhook.js';

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

// ajv-formats is CommonJS; under NodeNext its default import is the module object, the plugin is `.default`.
const addFormats = addFormatsPlugin.default;

function createAjv(): Ajv {
  // strictTypes off: int-or-string quantities put `pattern` beside `anyOf`, as the CRD rules require.
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, strictTypes: false });
  addFormats(ajv);
  ajv.addVocabulary([
    'x-kubernetes-validations',
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-int-or-string',
    'x-kubernetes-list-type',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-map-type',
    'x-kubernetes-embedded-resource',
  ]);
  return ajv;
}

const ajv = createAjv();

function describe(error: ErrorObject): string {
  const path = error.instancePath === '' ? '(root)' : error.instancePath.slice(1).replaceAll('/', '.');
  const detail =
    error.keyword === 'enum'
      ? `${error.message ?? ''}: ${JSON.stringify(error.params['allowedValues'])}`
      : error.message;
  return `${path}: ${detail ?? error.keyword}`;
}

/**
 * A validator for one kind. It works on a deep copy, so the caller's document is left as it was and
 * the returned value carries the defaults.
 */
function validatorFor<T>(def: ResourceDefinition): (document: unknown) => ValidationResult<T> {
  let compiled: ValidateFunction | undefined;
  return (document) => {
    compiled ??= ajv.compile(documentSchema(def));
    const copy: unknown = structuredClone(document);
    if (compiled(copy)) return { ok: true, value: copy as T };
    return { ok: false, errors: (compiled.errors ?? []).map(describe) };
  };
}

export const validateSkyhook = validatorFor<Skyhook>(SKYHOOK_DEFINITION);
export const validateDeploymentPolicy = validatorFor<DeploymentPolicy>(DEPLOYMENT_POLICY_DEFINITION);
export const validateNodeOp = validatorFor<NodeOp>(NODEOP_DEFINITION);
export const validateDisruptionBudget = validatorFor<DisruptionBudget>(DISRUPTION_BUDGET_DEFINITION);
export const validatePackageTrustPolicy = validatorFor<PackageTrustPolicy>(PACKAGE_TRUST_POLICY_DEFINITION);
export const validateMaintenancePolicy = validatorFor<MaintenancePolicy>(MAINTENANCE_POLICY_DEFINITION);
