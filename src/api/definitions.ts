/** All kinds of the API, in the order their CRD files are written. */
import { DEPLOYMENT_POLICY_DEFINITION } from './deployment-policy.js';
import { DISRUPTION_BUDGET_DEFINITION } from './disruption-budget.js';
import { MAINTENANCE_POLICY_DEFINITION } from './maintenance-policy.js';
import { NODEOP_DEFINITION } from './nodeop.js';
import { PACKAGE_TRUST_POLICY_DEFINITION } from './package-trust-policy.js';
import type { ResourceDefinition } from './resource-definition.js';
import { SKYHOOK_DEFINITION } from './skyhook.js';

export const RESOURCE_DEFINITIONS: readonly ResourceDefinition[] = [
  SKYHOOK_DEFINITION,
  DEPLOYMENT_POLICY_DEFINITION,
  NODEOP_DEFINITION,
  DISRUPTION_BUDGET_DEFINITION,
  MAINTENANCE_POLICY_DEFINITION,
  PACKAGE_TRUST_POLICY_DEFINITION,
];
