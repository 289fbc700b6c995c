/**
 * Waits that free their slot (#16 item 4; upstream NodeWright's decided but unshipped design for
 * non-interruptible workloads, its #543). Pods protect a node from this SCR's interrupts when they
 * match `podNonInterruptLabels` or opt in with `skyhook.nvidia.com/non-interruptible: "true"`.
 *
 * - A node whose next interrupt step those pods hold, with nothing of this SCR running on it,
 *   `waitsForPods`: admission takes such nodes last, so a node that can proceed gets the slot, and a
 *   strategy's batch does not stay open for one (rollout-admission.ts). It is cordoned (upstream's
 *   early cordon, which stops a replacement workload from landing and restarting the wait) only when
 *   it is admitted, i.e. when no node of the SCR that can proceed wants the slot; until then it stays
 *   schedulable and is not disrupted, so it costs no budget anywhere.
 * - The wait's start is kept on the node (`nonInterruptWaitSince_<scr>`), so the duration metric and
 *   the warning threshold survive an operator restart.
 * - `spec.podNonInterruptWarnAfter` only reports: past it the hold's reason becomes
 *   NonInterruptWaitLong (a Warning Event, the Blocked condition's reason). The pods are never
 *   interrupted and there is no timeout on the barrier.
 */
import { nodeAnnotations } from '../../../api/names.js';
import type { SkyhookSpec } from '../../../api/skyhook.js';
import { parseDurationMs } from '../../../util/duration.js';
import { DRAINED_STAGES } from './interrupt-gate.js';
import { protectedPods } from './interrupt-flow.js';
import { isPodWait, POD_WAIT, POD_WAIT_LONG, type NodeHold } from './node-holds.js';
import { hasInterrupt } from './package-rules.js';
import type { NodeView } from './planner-types.js';
import type { NodePackagesPlan } from './stage-machine.js';

/**
 * The protected pods that hold the node's next step (the start of a drained stage of a package
 * with an interrupt, which interrupt-gate.ts holds for them); empty when they hold nothing.
 */
export function podsHoldingInterrupt(
  spec: SkyhookSpec,
  node: NodeView,
  plan: NodePackagesPlan,
  configUpdates: Record<string, string[]>,
): string[] {
  const pods = protectedPods(spec.podNonInterruptLabels, node);
  if (pods.length === 0) return [];
  const held = plan.steps.some(
    (step) =>
      step.kind === 'start' &&
      step.target.spec !== undefined &&
      DRAINED_STAGES.has(step.target.stage) &&
      hasInterrupt(step.target.spec, configUpdates[step.target.name]),
  );
  return held ? pods : [];
}

export interface PodWait {
  /** The hold to report: NonInterruptWaitLong once past the threshold, else the one given. */
  hold?: NodeHold;
  /** The wait's start to keep on the node (RFC3339); absent when pods hold nothing. */
  since?: string;
  /** When the threshold will be passed, to look again then. */
  requeueAfterMs?: number;
}

/**
 * The node's wait for its pods: since when (kept, or now), and the hold once past the threshold.
 * `pods`: the pods holding the node when it `waitsForPods` (admission); the pass that cordons such a
 * node reports Cordoning, which neither ends its wait nor, if it was already reported waiting, replaces it.
 */
export function podWait(
  skyhook: string,
  spec: SkyhookSpec,
  node: NodeView,
  given: NodeHold | undefined,
  pods: string[] | undefined,
  now: number,
): PodWait {
  const previous = node.annotations[nodeAnnotations.waiting(skyhook)]?.split(':', 1)[0];
  const hold =
    pods !== undefined && given?.reason === 'Cordoning' && isPodWait(previous)
      ? { reason: POD_WAIT, detail: pods.join(', ') }
      : given;
  if (hold === undefined || (hold.reason !== POD_WAIT && pods === undefined)) return hold ? { hold } : {};
  const kept = node.annotations[nodeAnnotations.nonInterruptWaitSince(skyhook)];
  const keptMs = kept === undefined ? Number.NaN : Date.parse(kept);
  const sinceMs = Number.isFinite(keptMs) ? keptMs : now;
  const since = Number.isFinite(keptMs) ? kept! : new Date(now).toISOString();
  const warnMs = warnAfterMs(spec.podNonInterruptWarnAfter);
  if (hold.reason !== POD_WAIT || warnMs <= 0) return { hold, since };
  if (now - sinceMs < warnMs) return { hold, since, requeueAfterMs: sinceMs + warnMs - now };
  return {
    hold: {
      reason: POD_WAIT_LONG,
      detail: `${hold.detail} (waiting since ${since}, longer than podNonInterruptWarnAfter ${spec.podNonInterruptWarnAfter}; the pods are not interrupted)`,
    },
    since,
  };
}

/** The threshold in milliseconds; 0 (no warning) when unset, zero, or (never past the CRD's pattern) unreadable. */
function warnAfterMs(value: string | undefined): number {
  if (value === undefined) return 0;
  try {
    return parseDurationMs(value);
  } catch {
    return 0;
  }
}
