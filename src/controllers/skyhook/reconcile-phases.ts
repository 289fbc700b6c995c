/**
 * Where a Skyhook reconcile's time goes, as `skyhook_reconcile_phase_seconds{phase}`:
 * `plan` (the planner's input from the caches, health gates included, and the pure plan), `apply`
 * (the planned writes, step by step; their round trips to the API server) and `cleanup` (stale
 * ConfigMaps and node-metadata ConfigMaps). `controller_runtime_reconcile_time_seconds` has the sum only: a slow
 * reconcile on a busy API server is then told from a slow plan.
 */
import { Histogram, type Registry } from 'prom-client';
import { RECONCILE_TIME_BUCKETS } from '../../kube/metrics.js';

export type ReconcilePhase = 'plan' | 'apply' | 'cleanup';

export class ReconcilePhaseMetrics {
  private readonly seconds: Histogram<'phase'>;

  constructor(registry: Registry) {
    this.seconds = new Histogram({
      name: 'skyhook_reconcile_phase_seconds',
      help: 'Time of each phase of a Skyhook reconcile that planned: plan, apply (its writes), cleanup (stale ConfigMaps)',
      labelNames: ['phase'],
      buckets: RECONCILE_TIME_BUCKETS,
      registers: [registry],
    });
  }

  /** Runs `work`, observing its time under `phase` (also when it throws: a failed apply took its time too). */
  async time<T>(phase: ReconcilePhase, work: () => Promise<T>): Promise<T> {
    const end = this.seconds.startTimer({ phase });
    try {
      return await work();
    } finally {
      end();
    }
  }
}
