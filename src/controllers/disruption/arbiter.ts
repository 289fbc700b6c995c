/**
 * The one gate every actor passes before it newly disrupts a node (cordons it for an interrupt, a
 * NodeOp or a maintenance slot): Skyhook rollouts, NodeOps and node-initiated maintenance run in
 * separate controllers, and only a shared, synchronous check-and-reserve keeps them from taking down
 * more nodes together than a cluster-wide budget allows. Synchronous on purpose: in one event loop a
 * check and its reservation cannot interleave with another controller's.
 *
 * A node that is already disrupted (`isDisrupted` in jobs/cordon/claims.ts) is always granted: joining
 * a disruption uses no new slot. Outside a covering budget's maintenance windows a node not yet
 * disrupted is refused (`OutsideMaintenanceWindow`, with the next opening), whoever asks.
 */

/** Why a node may not be disrupted now, naming the budget that refused it. */
export type DisruptionDecision =
  | { granted: true }
  | {
      granted: false;
      budget: string;
      reason: string;
      /** `OutsideMaintenanceWindow`: the budget's windows are closed (then `nextOpen`, ms); absent: it is full. */
      code?: typeof OUTSIDE_WINDOW;
      nextOpen?: number;
    };

/** The refusal code (and the word every actor's status shows) when a budget's maintenance windows are closed. */
export const OUTSIDE_WINDOW = 'OutsideMaintenanceWindow';

export interface DisruptionArbiter {
  /**
   * May `holder` (e.g. `skyhook/<scr>`, `nodeop/<ns>/<name>`, `maintenance/<policy>`) start disrupting
   * `node` now? On a grant a slot is reserved for the holder until its cordon shows in the node cache.
   * With `claim` (the node annotation the holder's cordon writes), the slot is reserved until the cache
   * shows that claim, even on a node already disrupted: another holder may lift its own cordon before
   * ours lands, and the node would count as free in between.
   */
  tryAcquire(node: string, holder: string, claim?: string): DisruptionDecision;
}

/** No cluster-wide budget: every request is granted (each SCR's own budget still applies). */
export const unlimitedArbiter: DisruptionArbiter = { tryAcquire: () => ({ granted: true }) };
