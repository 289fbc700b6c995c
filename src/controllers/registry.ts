/**
 * The controllers `skyhook operator` runs while it leads, in start order: the operator starts them
 * after winning the election and stops them on shutdown. An empty list is valid (the operator then
 * only elects, probes and serves metrics). Every controller that disrupts nodes asks the one
 * DisruptionArbiter of the process, `sharedDisruption(runtime)` (disruption/shared-arbiter.ts), in its
 * start; nothing needs passing here.
 */
import type { ControllerFactory } from '../kube/runtime.js';
import { disruptionBudgetControllerFactory } from './disruption/budget-controller.js';
import { maintenanceControllerFactory } from './maintenance/controller.js';
import { nodeOpControllerFactory } from './nodeop/controller.js';
import { skyhookControllerFactory } from './skyhook/skyhook-controller.js';
import { trustPolicyControllerFactory } from './trust/trust-wiring.js';

export const controllers: ControllerFactory[] = [
  nodeOpControllerFactory(),
  skyhookControllerFactory(),
  disruptionBudgetControllerFactory(),
  maintenanceControllerFactory(),
  trustPolicyControllerFactory(),
];
