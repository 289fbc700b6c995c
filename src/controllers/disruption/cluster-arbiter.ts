/**
 * The real DisruptionArbiter: a synchronous check-and-reserve over the node cache and the
 * DisruptionBudget cache, shared by every controller of the process (shared-arbiter.ts). Its only
 * durable state is the cordon claims on the nodes: a grant reserves the node in memory until the
 * holder's claim shows in the node cache (or a short TTL passes, for a write that never happened),
 * so an operator restart loses nothing but reservations whose writes are already in the cluster.
 * Refusals are remembered for a while, for the budgets' `status.waiting`, a metric and an Event.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { DisruptionBudget } from '../../api/disruption-budget.js';
import { nameOf } from '../../api/object-meta.js';
import { cordonViewOf, isDisrupted } from '../../jobs/cordon/claims.js';
import type { DisruptionArbiter, DisruptionDecision } from './arbiter.js';
import { type BudgetNode, DisruptionLedger } from './budget-rules.js';

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
  /** How long a grant holds a slot without its claim showing in the cache. */
  reservationTtlMs?: number;
  /** A refusal not repeated for this long is forgotten (the holder gave up or was granted elsewhere). */
  waitMemoryMs?: number;
  /** Called on every refusal (a metric, an Event). */
  onRefused?: (wait: RefusedWait, first: boolean) => void;
}

const DEFAULT_RESERVATION_TTL_MS = 30_000;
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
  /** node → holder and expiry of a grant whose claim the cache does not show yet. */
  private readonly reservations = new Map<string, { holder: string; untilMs: number }>();
  /** `node|holder` → the refusal. */
  private readonly refusals = new Map<string, RefusedWait>();

  constructor(sources: ArbiterSources, options: ArbiterOptions = {}) {
    this.sources = sources;
    this.reservationTtlMs = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.waitMemoryMs = options.waitMemoryMs ?? DEFAULT_WAIT_MEMORY_MS;
    this.onRefused = options.onRefused;
  }

  tryAcquire(node: string, holder: string): DisruptionDecision {
    const now = this.sources.now();
    const ledger = this.ledger(now);
    const decision = ledger.decide(node);
    const key = `${node}|${holder}`;
    if (decision.granted) {
      this.refusals.delete(key);
      if (!ledger.isDisrupted(node)) this.reservations.set(node, { holder, untilMs: now + this.reservationTtlMs });
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
    const disrupted = new Set(nodes.filter(isDisrupted).map((n) => n.name));
    for (const [node, reservation] of this.reservations)
      if (disrupted.has(node) || reservation.untilMs <= now) this.reservations.delete(node);
    return new DisruptionLedger(this.sources.budgets(), nodes, this.reservations.keys());
  }

  /** Refusals repeated recently whose node is still not disrupted, oldest first. */
  waits(): RefusedWait[] {
    const now = this.sources.now();
    const ledger = this.ledger(now);
    for (const [key, wait] of this.refusals)
      if (now - wait.lastMs > this.waitMemoryMs || ledger.isDisrupted(wait.node)) this.refusals.delete(key);
    return [...this.refusals.values()].sort((a, b) => a.sinceMs - b.sinceMs || a.node.localeCompare(b.node));
  }
}
