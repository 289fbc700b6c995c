/**
 * The counting rules of the cluster-wide DisruptionBudgets, pure so the Skyhook planner (which may do
 * no I/O) and the arbiter every controller asks at write time decide with the same rules: which
 * nodes a budget covers, how many it allows, which count as disrupted (`isDisrupted`), and whether
 * one more node may be disrupted. A `DisruptionLedger` is the state of every budget over one snapshot
 * of the nodes plus the nodes granted since (the planner's cordons of this pass, the arbiter's
 * reservations not yet in its cache); granting a node takes it in the ledger.
 */
import type { DisruptionBudget, MaxDisrupted } from '../../api/disruption-budget.js';
import { selectorMatches } from '../../api/label-selector.js';
import { nameOf } from '../../api/object-meta.js';
import { isDisrupted, type NodeCordonView } from '../../jobs/cordon/claims.js';
import { type DisruptionDecision, OUTSIDE_WINDOW } from './arbiter.js';
import { describeWindow, nextWindowOpen, windowsOpen } from '../../util/time-window.js';
import type { MaintenanceWindow } from '../../api/maintenance-window.js';

/** What the rules read of a node (the planner's NodeView has this shape). */
export interface BudgetNode extends NodeCordonView {
  name: string;
  labels: Record<string, string>;
}

/** How many nodes the budget allows disrupted among `matched`: a count as is; a percent rounded down, at least 1. */
export function budgetLimit(max: MaxDisrupted, matched: number): number {
  if (max.count !== undefined) return max.count;
  return Math.max(1, Math.floor((matched * (max.percent ?? 100)) / 100));
}

/** One budget over a snapshot: the nodes it covers, its limit, and the covered nodes disrupted (or granted). */
export interface BudgetUsage {
  name: string;
  limit: number;
  matched: ReadonlySet<string>;
  disrupted: Set<string>;
  /** The budget's maintenance windows (empty: always open). */
  windows: readonly MaintenanceWindow[];
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/**
 * The refusal of a budget whose windows are closed at `now`, or undefined when they are open (or it
 * has none): no covered node is newly disrupted outside them, by any actor.
 */
export function windowRefusal(usage: BudgetUsage, now: number): DisruptionDecision | undefined {
  if (usage.windows.length === 0 || windowsOpen(usage.windows, new Date(now))) return undefined;
  const next = nextWindowOpen(usage.windows, new Date(now))?.getTime();
  const when = next === undefined ? 'no window opens in the next two weeks' : `next opens ${iso(next)}`;
  const reason = `${OUTSIDE_WINDOW}: DisruptionBudget ${usage.name} allows new disruptions only in its maintenance windows (${usage.windows.map(describeWindow).join(', ')}); ${when}`;
  return {
    granted: false,
    budget: usage.name,
    reason,
    code: OUTSIDE_WINDOW,
    ...(next !== undefined ? { nextOpen: next } : {}),
  };
}

const MAX_NAMED = 3;

/** Why `budget` refuses one more node, naming it and the nodes that use it up. */
export function refusalReason(usage: BudgetUsage): string {
  const names = [...usage.disrupted].sort();
  const shown = names.slice(0, MAX_NAMED).join(', ') + (names.length > MAX_NAMED ? ', …' : '');
  return `DisruptionBudget ${usage.name} allows ${usage.limit} of ${usage.matched.size} node(s) disrupted at once; disrupted: ${shown}`;
}

export class DisruptionLedger {
  private readonly usages: BudgetUsage[];
  /** Nodes disrupted in the snapshot or granted since: joining them needs no slot. */
  private readonly disrupted = new Set<string>();

  /** With a time, a covered node is refused outside its budgets' maintenance windows (the arbiter's check). */
  private readonly now: number | undefined;

  /**
   * `granted`: nodes granted earlier that the snapshot does not show disrupted yet (reservations).
   * `now`: check the budgets' maintenance windows at this time too (the planner holds nodes outside
   * windows itself, with its own hold, and leaves it out).
   */
  constructor(
    budgets: readonly DisruptionBudget[],
    nodes: readonly BudgetNode[],
    granted: Iterable<string> = [],
    now?: number,
  ) {
    this.now = now;
    const names = new Set(nodes.map((node) => node.name));
    for (const node of nodes) if (isDisrupted(node)) this.disrupted.add(node.name);
    for (const name of granted) if (names.has(name)) this.disrupted.add(name);
    this.usages = budgets.map((budget) => {
      const matched = new Set(
        nodes.filter((node) => selectorMatches(budget.spec.nodeSelector, node.labels)).map((node) => node.name),
      );
      return {
        name: nameOf(budget),
        limit: budgetLimit(budget.spec.maxDisrupted, matched.size),
        matched,
        disrupted: new Set([...matched].filter((name) => this.disrupted.has(name))),
        windows: budget.spec.maintenanceWindows ?? [],
      };
    });
  }

  /** True when no budget exists: every decision is a grant (today's behaviour). */
  get empty(): boolean {
    return this.usages.length === 0;
  }

  isDisrupted(node: string): boolean {
    return this.disrupted.has(node);
  }

  /**
   * May `node` be newly disrupted now? Every budget covering it must have room (and, with a time, an
   * open window); a disrupted node always may: it finishes.
   */
  decide(node: string): DisruptionDecision {
    if (this.disrupted.has(node)) return { granted: true };
    const now = this.now;
    if (now !== undefined)
      for (const usage of this.usages) {
        const closed = usage.matched.has(node) ? windowRefusal(usage, now) : undefined;
        if (closed) return closed;
      }
    const full = this.usages.find((usage) => usage.matched.has(node) && usage.disrupted.size >= usage.limit);
    return full ? { granted: false, budget: full.name, reason: refusalReason(full) } : { granted: true };
  }

  /** `decide`, and on a grant the node counts as disrupted in every budget covering it from now on. */
  take(node: string): DisruptionDecision {
    const decision = this.decide(node);
    if (!decision.granted || this.disrupted.has(node)) return decision;
    this.disrupted.add(node);
    for (const usage of this.usages) if (usage.matched.has(node)) usage.disrupted.add(node);
    return decision;
  }

  /** Each budget's state (for status and metrics). */
  usage(): readonly BudgetUsage[] {
    return this.usages;
  }
}
