/**
 * When a NodeOp's reconcile asks to be looked at again without an event, and why: the earliest
 * time any node's step asked for (a pod stuck until, a reboot's deadline, a cluster budget to ask
 * again) and the safety net while nodes are in flight. The reason goes with the requeue (logged at
 * debug level by the workers), so a key that keeps waking up says which timer wakes it.
 */
import type { ReconcileResult } from '../../kube/queue.js';

export class Recheck {
  private atMs = Number.POSITIVE_INFINITY;
  private why: string | undefined;

  /** Asks to look again at `atMs` (ms since the epoch) for `reason`; the earliest ask wins. */
  at(atMs: number | undefined, reason = 'a node step asked to look again'): void {
    if (atMs === undefined || atMs >= this.atMs) return;
    this.atMs = atMs;
    this.why = reason;
  }

  result(now: number): ReconcileResult {
    if (!Number.isFinite(this.atMs)) return undefined;
    return { requeueAfterMs: Math.max(0, this.atMs - now), ...(this.why ? { reason: this.why } : {}) };
  }
}
