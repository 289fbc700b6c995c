/**
 * Why a Skyhook reconcile asked to be looked at again, as `skyhook_reconcile_requeues_total{reason}`
 * and in the queue's debug log: `controller_runtime_reconcile_total{result="requeue_after"}` alone
 * cannot tell a wait for our own writes to reach the caches (an event will come; the requeue is a
 * safety net) from a paced status write or a time the plan itself waits for (an op's retention, an
 * interrupt's deadline, a maintenance window, a health gate's recheck).
 */
import { Counter, type Registry } from 'prom-client';
import type { ReconcileResult } from '../../kube/queue.js';

export type RequeueReason = 'caches_behind' | 'conflict' | 'status_pacing' | 'planned';

export class RequeueMetrics {
  private readonly requeues: Counter<'reason'>;

  constructor(registry: Registry) {
    this.requeues = new Counter({
      name: 'skyhook_reconcile_requeues_total',
      help: 'Skyhook reconciles that asked to be looked at again, by why',
      labelNames: ['reason'],
      registers: [registry],
    });
  }

  /** The reconcile's result for a requeue after `ms`, counted under `reason`. */
  requeue(reason: RequeueReason, ms: number): ReconcileResult {
    this.requeues.inc({ reason });
    return { requeueAfterMs: ms, reason };
  }
}
