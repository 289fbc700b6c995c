/**
 * Incremental planning (#18): the per-node results of a planning run, kept by the CALLER between runs
 * (`PlannerInput.cache` in, `PlanResult.cache` out) so the planner stays a pure function with no state
 * of its own. A node's entry is reused only while everything its per-node phases read is unchanged:
 * the node object and its ops (by identity: informers replace an object when it changes, and the
 * reconciler's views keep theirs while it does not), and, for the whole SCR, a key of what those phases
 * read of the pass (spec, pause/disable, problems, settings). Nothing cached depends on `now`: a stage
 * plan waiting on a retry backoff is not stored, and health-gate decisions (timeouts) are always made
 * afresh. Any other change recomputes the entry, so an incremental run gives a full run's actions.
 */
import type { SkyhookStatusValue } from '../../../api/node-state.js';
import type { NodeWork } from './node-work.js';
import type { NodeView, PlannerEvent, StageOpSummary } from './planner-types.js';
import type { NodePackagesPlan } from './stage-machine.js';

/** One node's record once op outcomes and version changes are in (pass-nodes.ts refreshNode). */
export interface RefreshedNode {
  work: NodeWork;
  events: PlannerEvent[];
  changedPackages: string[];
  /** A version change was written into the state in this refresh (state-transitions.ts `applied`). */
  versionChangeApplied?: boolean;
}

/** One node's stage plan and status before admission (pass-nodes.ts decideStatuses). */
export interface DecidedNode {
  /** The record it was decided from (after config cycles): another record decides afresh. */
  from: NodeWork;
  /** The SCR's config updates it was decided under (JSON). */
  configKey: string;
  plan: NodePackagesPlan;
  status: SkyhookStatusValue;
  /** `from` with the entries of running stages written back. */
  work: NodeWork;
}

interface NodeEntry {
  node: NodeView;
  ops: readonly StageOpSummary[];
  refreshed: RefreshedNode;
  decided?: DecidedNode;
  /** Later phases' per-node results (`memo`), by phase. */
  memos?: Readonly<Record<string, { deps: readonly unknown[]; value: unknown }>>;
}

interface SkyhookEntry {
  key: string;
  nodes: Map<string, NodeEntry>;
}

/** What the caller keeps between runs; opaque to it. */
export interface PlanCache {
  readonly skyhooks: ReadonlyMap<string, SkyhookEntry>;
}

/** The cache to start from: a run given it is incremental (and returns the cache for the next). */
export function emptyPlanCache(): PlanCache {
  return { skyhooks: new Map() };
}

/** The cache of one SCR during one run: reads the previous run's entries, collects this run's. */
export class SkyhookCacheRun {
  readonly next = new Map<string, NodeEntry>();
  private readonly previous: ReadonlyMap<string, NodeEntry> | undefined;
  readonly key: string;

  constructor(previous: ReadonlyMap<string, NodeEntry> | undefined, key: string) {
    this.previous = previous;
    this.key = key;
  }

  /** The node's refreshed record: the previous run's when the node and its ops are the same objects. */
  refresh(node: NodeView, ops: readonly StageOpSummary[], compute: () => RefreshedNode): RefreshedNode {
    const old = this.previous?.get(node.name);
    if (old !== undefined && old.node === node && sameOps(old.ops, ops)) {
      this.next.set(node.name, old);
      return old.refreshed;
    }
    const refreshed = compute();
    this.next.set(node.name, { node, ops, refreshed });
    return refreshed;
  }

  /** The node's decision: the previous one when made from the same record under the same config updates. */
  decide(from: NodeWork, configKey: string, compute: () => DecidedNode): DecidedNode {
    const entry = this.next.get(from.node.name);
    const old = entry?.decided;
    if (old !== undefined && old.from === from && old.configKey === configKey) return old;
    const decided = compute();
    // A plan that waits on a backoff depends on `now`: not kept.
    const timed = decided.plan.steps.some((step) => step.kind === 'wait' && step.until !== undefined);
    if (entry !== undefined) this.next.set(from.node.name, timed ? withoutDecision(entry) : { ...entry, decided });
    return decided;
  }
}

/**
 * A later phase's result for one node, reused while `deps` are the same (===) as last run's: they
 * must hold everything the result depends on beyond the SCR's key. The node must have been refreshed
 * this run (its entry starts there); `slot` names the phase, whose result type is always `T`.
 */
export function memo<T>(
  run: SkyhookCacheRun | undefined,
  node: string,
  slot: string,
  deps: readonly unknown[],
  compute: () => T,
): T {
  const entry = run?.next.get(node);
  if (run === undefined || entry === undefined) return compute();
  const old = entry.memos?.[slot];
  if (old !== undefined && sameList(old.deps, deps)) return old.value as T;
  const value = compute();
  // A new entry: the previous run's (the caller's input) is never changed.
  run.next.set(node, { ...entry, memos: { ...entry.memos, [slot]: { deps, value } } });
  return value;
}

/** The caches of every SCR during one run. */
export class PlanCacheRun {
  private readonly runs = new Map<string, SkyhookCacheRun>();
  private readonly previous: PlanCache | undefined;

  constructor(previous: PlanCache | undefined) {
    this.previous = previous;
  }

  /** The SCR's cache under `key`; the previous run's entries count only under the same key. */
  forSkyhook(name: string, key: string): SkyhookCacheRun {
    const old = this.previous?.skyhooks.get(name);
    const run = new SkyhookCacheRun(old?.key === key ? old.nodes : undefined, key);
    this.runs.set(name, run);
    return run;
  }

  /** This run's entries, and the previous run's for SCRs this run did not plan (but that still exist). */
  result(skyhooks: readonly string[]): PlanCache {
    const out = new Map<string, SkyhookEntry>();
    for (const name of skyhooks) {
      const run = this.runs.get(name);
      const kept = run ? { key: run.key, nodes: run.next } : this.previous?.skyhooks.get(name);
      if (kept) out.set(name, kept);
    }
    return { skyhooks: out };
  }
}

function withoutDecision(entry: NodeEntry): NodeEntry {
  return entry.memos === undefined
    ? { node: entry.node, ops: entry.ops, refreshed: entry.refreshed }
    : { node: entry.node, ops: entry.ops, refreshed: entry.refreshed, memos: entry.memos };
}

function sameOps(a: readonly StageOpSummary[], b: readonly StageOpSummary[]): boolean {
  return sameList(a, b);
}

function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
