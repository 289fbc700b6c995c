/**
 * What may hold a reboot slot before it is granted: kured's blockers (pods matching
 * `blockingPodSelectors` on the node, alerts of `alertGate`). The maintenance controller calls
 * `checkRebootBlockers` for a reboot request right before it would grant the slot; a blocked request
 * keeps its place in the queue with the reason shown in the policy's status, and the controller
 * looks again after `recheckAfterMs`.
 *
 * The helper "maint-node" owns the implementation (pod list on the node, Prometheus ALERTS query);
 * this module fixes the contract: the controller depends only on `RebootBlockerCheck` and takes it
 * as an option, defaulting to `checkRebootBlockers` below.
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { MaintenancePolicySpec } from '../../api/maintenance-policy.js';

export interface RebootBlockerContext {
  core: CoreV1Api;
  logger: Logger;
  /** Aborted when the controller stops. */
  signal?: AbortSignal;
}

/** Not blocked, or blocked with a reason name (e.g. `BlockingPods`, `AlertsFiring`) and what blocks. */
export type RebootBlockerResult = { blocked: false } | { blocked: true; reason: string; message: string };

export type RebootBlockerCheck = (
  ctx: RebootBlockerContext,
  policy: { name: string; spec: MaintenancePolicySpec },
  node: string,
) => Promise<RebootBlockerResult>;

/** The default check: never blocked (the pod and alert checks replace it in this module). */
export const checkRebootBlockers: RebootBlockerCheck = async () => ({ blocked: false });
