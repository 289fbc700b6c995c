/**
 * The health-gate decision of one node whose packages are done for an SCR (pure: the gate results
 * and `now` are inputs; views/health-gates/ evaluates them). A node this SCR interrupted (it holds
 * the SCR's cordon claim) first waits on `beforeUncordon` with its cordon kept; then, cordon lifted,
 * on `beforeBatch` while it keeps its rollout slot, so the next batch (or, without a strategy, the
 * next node) starts only once the nodes just finished are healthy. Until every gate passes the node
 * is `in_progress`; a gate failing longer than its timeout makes it `erroring` with the gate's
 * reason (and a `beforeUncordon` node stays cordoned). Gates keep being checked, so a node whose
 * gate passes later goes on. The wait's start is kept in the node's `healthGate_<scr>` annotation,
 * so an operator restart does not restart the timeout. Only the timeout is a requeue of the plan:
 * the gate results change outside it, and the reconciler checks them again while a wait is under
 * way (views/health-gates/evaluate.ts `GATE_RECHECK_MS`); `skyhook plan` so jumps to the timeout.
 */
import {
  DEFAULT_GATE_TIMEOUT,
  gateKey,
  gateTimeoutMs,
  type GatePoint,
  type HealthGate,
  type HealthGates,
  type GateCheckResult,
} from '../../../api/health-gates.js';
import { nodeAnnotations } from '../../../api/names.js';
import type { SkyhookStatusValue } from '../../../api/node-state.js';
import type { NodeHold } from './node-holds.js';
import type { NodeView, SetNodeAnnotations } from './planner-types.js';

export interface GateStateAnnotation {
  point: GatePoint;
  /** Milliseconds since the epoch. */
  since: number;
}

export interface GateDecision {
  /** `complete` once every gate passed (or none applies). */
  status: Extract<SkyhookStatusValue, 'in_progress' | 'erroring' | 'complete'>;
  hold?: NodeHold;
  /** The node's cordon claim may be released (its beforeUncordon gates passed, or it has none). */
  release: boolean;
  /** The `healthGate_<scr>` value to write (`null`: remove it); absent when it is right already. */
  annotation?: string | null;
  /** The gate's reason when it timed out (the node's Erroring condition says it). */
  failure?: string;
  requeueAfterMs?: number;
}

export interface GateNodeInput {
  skyhook: string;
  gates: HealthGates | undefined;
  /** This node's results (`gateKey(point, name)` → result); a missing one counts as not passed yet. */
  results: Record<string, GateCheckResult> | undefined;
  node: NodeView;
  /** `status_<scr>` as last written: a node already complete is not gated again. */
  recordStatus: SkyhookStatusValue | undefined;
  /** The node holds this SCR's cordon claim (it was interrupted by it). */
  holdsClaim: boolean;
  now: number;
}

/** `healthGate_<scr>` parsed; anything unreadable counts as no wait started. */
export function readGateState(node: NodeView, skyhook: string): GateStateAnnotation | undefined {
  const text = node.annotations[nodeAnnotations.healthGate(skyhook)];
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { point, since } = parsed as { point?: unknown; since?: unknown };
    const ms = typeof since === 'string' ? Date.parse(since) : Number.NaN;
    if ((point !== 'beforeBatch' && point !== 'beforeUncordon') || Number.isNaN(ms)) return undefined;
    return { point, since: ms };
  } catch {
    return undefined;
  }
}

const serialize = (state: GateStateAnnotation): string =>
  JSON.stringify({ point: state.point, since: new Date(state.since).toISOString() });

/** The gate points that apply to the node now, in the order they are passed. */
function pointsOf(input: GateNodeInput): { point: GatePoint; gates: HealthGate[] }[] {
  const points: { point: GatePoint; gates: HealthGate[] }[] = [];
  const uncordon = input.gates?.beforeUncordon ?? [];
  const batch = input.gates?.beforeBatch ?? [];
  if (input.holdsClaim && uncordon.length > 0) points.push({ point: 'beforeUncordon', gates: uncordon });
  if (input.recordStatus !== 'complete' && batch.length > 0) points.push({ point: 'beforeBatch', gates: batch });
  return points;
}

/** The decision for a node whose packages are all complete for the SCR. */
export function decideGates(input: GateNodeInput): GateDecision {
  const state = readGateState(input.node, input.skyhook);
  const present = input.node.annotations[nodeAnnotations.healthGate(input.skyhook)] !== undefined;
  for (const { point, gates } of pointsOf(input)) {
    const failing = gates
      .map((gate) => ({ gate, result: input.results?.[gateKey(point, gate.name)] }))
      .find(({ result }) => result?.passed !== true);
    if (failing === undefined) continue;
    const since = state?.point === point ? state.since : input.now;
    const decision = waitOn(point, failing.gate, failing.result?.detail ?? 'not checked yet', since, input.now);
    if (state?.point !== point) decision.annotation = serialize({ point, since });
    return decision;
  }
  const done: GateDecision = { status: 'complete', release: true };
  if (present) done.annotation = null;
  return done;
}

function waitOn(point: GatePoint, gate: HealthGate, detail: string, since: number, now: number): GateDecision {
  const timeoutMs = gateTimeoutMs(gate);
  const timeout = gate.timeout ?? DEFAULT_GATE_TIMEOUT;
  const release = point === 'beforeBatch';
  if (now - since >= timeoutMs) {
    const failure = `${point} gate ${gate.name} did not pass within ${timeout}: ${detail}`;
    return {
      status: 'erroring',
      release,
      failure,
      hold: { reason: 'HealthGateTimedOut', detail: failure },
    };
  }
  return {
    status: 'in_progress',
    release,
    hold: {
      reason: 'HealthGate',
      detail: `${point} gate ${gate.name}: ${detail} (waiting since ${new Date(since).toISOString()}, timeout ${timeout})`,
    },
    requeueAfterMs: Math.max(0, since + timeoutMs - now),
  };
}

/**
 * The `healthGate_<scr>` writes of a pass: a wait that starts (or moves to the next point) is
 * recorded, one that ended goes, and so does a stale one on a node not waiting on a gate (its
 * packages started again), so a later wait never inherits an old start.
 */
export function gateAnnotationWrites(
  skyhook: string,
  nodes: NodeView[],
  gates: ReadonlyMap<string, GateDecision>,
): SetNodeAnnotations[] {
  const key = nodeAnnotations.healthGate(skyhook);
  const writes: SetNodeAnnotations[] = [];
  for (const node of nodes) {
    const decision = gates.get(node.name);
    const value = decision ? decision.annotation : node.annotations[key] !== undefined ? null : undefined;
    if (value !== undefined)
      writes.push({ kind: 'setNodeAnnotations', node: node.name, annotations: { [key]: value } });
  }
  return writes;
}
