/**
 * The real DisruptionArbiter: a synchronous check-and-reserve over the node cache and the
 * DisruptionBudget cache, shared by every controller of the process (shared-arbiter.ts). Its only
 * durable state is the cordon claims on the nodes: a grant reserves the node in memory until the
 * node cache shows it disrupted (`observed`, from every node event, so a cordon lifted again before
 * anyone asked still ends it), so an operator restart loses nothing but reservations whose writes are
 * already in the cluster. Not on a timer: a 30 s limit let a slot go while the watches ran later than
 * that (a loaded API server) and granted it twice. Only a grant whose holder never writes (it gave up)
 * waits for the 5-minute safety net, which says so (`onReservationExpired`).
 * Refusals are remembered for a while, for the budgets' `status.waiting`, a metric and an Event.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { DisruptionBudget } from '../../api/disruption-budget.js';
import { nameOf } from '../../api/object-meta.js';
import { cordonViewOf, isDisrupted } from '../../jobs/cordon/claims.js';
import type { DisruptionArbiter, DisruptionDecision } from './arbiter.js';
import { type BudgetNode, DisruptionLedger } from './budget-rules.js';
import { compareText } from '../../util/compare.js';

/** What the arbiter reads: the caches (every call reads them afresh) and the clock. */
export interface ArbiterSources {
  nodes(): readonly V1Node[];
  budgets(): readonly DisruptionBudget[];
  now(): number;
}

/** A refused request, as the budget status reports it. */
export interface RefusedWait {
  node: string;
  holder: string;
  budget: string;
  reason: string;
  /** First refusal of this node for this holder (ms since the epoch). */
  sinceMs: number;
  lastMs: number;
}

export interface ArbiterOptions {
  /** Safety net: how long a grant holds a slot without its claim ever showing in the cache. */
  reservationTtlMs?: number;
  /** Called when the safety net drops a reservation (a warning: the holder never wrote its cordon). */
  onReservationExpired?: (node: string, holder: string, ageMs: number) => void;
  /** A refusal not repeated for this long is forgotten (the holder gave up or was granted elsewhere). */
  waitMemoryMs?: number;
  /** Called on every refusal (a metric, an Event). */
  onRefused?: (wait: RefusedWait, first: boolean) => void;
}

const DEFAULT_RESERVATION_TTL_MS = 5 * 60_000;
const DEFAULT_WAIT_MEMORY_MS = 60_000;

export const budgetNodeOf = (node: V1Node): BudgetNode => ({
  ...cordonViewOf(node),
  name: nameOf(node),
  labels: node.metadata?.labels ?? {},
});

export class ClusterDisruptionArbiter implements DisruptionArbiter {
  private readonly sources: ArbiterSources;
  private readonly reservationTtlMs: number;
  private readonly waitMemoryMs: number;
  private readonly onRefused: ((wait: RefusedWait, first: boolean) => void) | undefined;
  private readonly onExpired: ArbiterOptions['onReservationExpired'];
  /** node → holder, time and claim annotation (when known) of a grant whose cordon the cache has not shown yet. */
  private readonly reservations = new Map<string, { holder: string; sinceMs: number; claim?: string }>();
  /** `node|holder` → the refusal. */
  private readonly refusals = new Map<string, RefusedWait>();

  constructor(sources: ArbiterSources, options: ArbiterOptions = {}) {
    this.sources = sources;
    this.reservationTtlMs = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.waitMemoryMs = options.waitMemoryMs ?? DEFAULT_WAIT_MEMORY_MS;
    this.onRefused = options.onRefused;
    this.onExpired = options.onReservationExpired;
  }

  /** Every node event (add, update): a reserved node the cache shows disrupted has used its reservation. */
  observed(node: V1Node): void {
    const name = nameOf(node);
    const reservation = this.reservations.get(name);
    if (reservation && shows(budgetNodeOf(node), reservation.claim)) this.reservations.delete(name);
  }

  tryAcquire(node: string, holder: string, claim?: string): DisruptionDecision {
    const now = this.sources.now();
    const ledger = this.ledger(now);
    const decision = ledger.decide(node);
    const key = `${node}|${holder}`;
    if (decision.granted) {
      this.refusals.delete(key);
      // Joining a disruption needs a slot too when ours is a claim of its own: the other holder's
      // release may land before our cordon, and the node must not look free in between.
      if (!ledger.isDisrupted(node) || claim !== undefined)
        this.reservations.set(node, { holder, sinceMs: now, ...(claim !== undefined ? { claim } : {}) });
      return decision;
    }
    const previous = this.refusals.get(key);
    const wait: RefusedWait = {
      node,
      holder,
      budget: decision.budget,
      reason: decision.reason,
      sinceMs: previous?.sinceMs ?? now,
      lastMs: now,
    };
    this.refusals.set(key, wait);
    this.onRefused?.(wait, previous === undefined);
    return decision;
  }

  /** Every budget over the cache as it is now, with the reservations not yet in it. */
  ledger(now = this.sources.now()): DisruptionLedger {
    const nodes = this.sources.nodes().map(budgetNodeOf);
    const byName = new Map(nodes.map((n) => [n.name, n]));
    for (const [node, { holder, sinceMs, claim }] of this.reservations) {
      const view = byName.get(node);
      if (view && shows(view, claim)) this.reservations.delete(node);
      else if (now - sinceMs >= this.reservationTtlMs) {
        this.reservations.delete(node);
        this.onExpired?.(node, holder, now - sinceMs);
      }
    }
    return new DisruptionLedger(this.sources.budgets(), nodes, this.reservations.keys(), now);
  }

  /** Refusals repeated recently whose node is still not disrupted, oldest first. */
  waits(): RefusedWait[] {
    const now = this.sources.now();
    const ledger = this.ledger(now);
    for (const [key, wait] of this.refusals)
      if (now - wait.lastMs > this.waitMemoryMs || ledger.isDisrupted(wait.node)) this.refusals.delete(key);
    return [...this.refusals.values()].sort((a, b) => a.sinceMs - b.sinceMs || compareText(a.node, b.node));
  }
}

/** The node shows the reserved disruption: disrupted, and with the holder's own claim when it has one. */
function shows(node: BudgetNode, claim: string | undefined): boolean {
  return isDisrupted(node) && (claim === undefined || node.annotations[claim] !== undefined);
}
