/**
 * The maintenance controller's Prometheus series: slots held and requests queued per policy (and
 * per wait reason), completions and slot durations per protocol, and kured's one metric under our
 * prefix: `skyhook_maintenance_reboot_required{node}` is 1 while a node asks for a reboot, as
 * `kured_reboot_required{node}` is, so a kured dashboard or alert needs only the metric name changed.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { MaintenanceProtocol } from '../../api/maintenance-policy.js';

export class MaintenanceMetrics {
  private readonly holders: Gauge<'policy'>;
  private readonly queued: Gauge<'policy' | 'reason'>;
  private readonly completions: Counter<'policy' | 'protocol'>;
  private readonly expirations: Counter<'policy' | 'reason'>;
  private readonly duration: Histogram<'policy' | 'protocol'>;
  private readonly rebootRequired: Gauge<'node'>;
  private readonly queuedReasons = new Map<string, Set<string>>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.holders = new Gauge({
      name: 'skyhook_maintenance_slots_held',
      help: 'Nodes holding a maintenance slot of the policy',
      labelNames: ['policy'],
      registers,
    });
    this.queued = new Gauge({
      name: 'skyhook_maintenance_queued',
      help: 'Nodes waiting for a maintenance slot of the policy, per wait reason',
      labelNames: ['policy', 'reason'],
      registers,
    });
    this.completions = new Counter({
      name: 'skyhook_maintenance_completions_total',
      help: 'Maintenance slots released after the node reported done',
      labelNames: ['policy', 'protocol'],
      registers,
    });
    this.expirations = new Counter({
      name: 'skyhook_maintenance_releases_total',
      help: 'Maintenance slots released without the node reporting done (node deleted, lockTTL expired, withdrawn, orphaned)',
      labelNames: ['policy', 'reason'],
      registers,
    });
    this.duration = new Histogram({
      name: 'skyhook_maintenance_duration_seconds',
      help: 'From the request to the release of a completed maintenance slot',
      labelNames: ['policy', 'protocol'],
      buckets: [10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21_600],
      registers,
    });
    this.rebootRequired = new Gauge({
      name: 'skyhook_maintenance_reboot_required',
      help: "1 while the node asks for a reboot (kured's kured_reboot_required)",
      labelNames: ['node'],
      registers,
    });
  }

  /** The policy's current slots and queue (the queue's reasons replace the previous ones). */
  report(policy: string, holders: number, queueReasons: readonly string[]): void {
    this.holders.set({ policy }, holders);
    const counts = new Map<string, number>();
    for (const reason of queueReasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
    for (const reason of this.queuedReasons.get(policy) ?? [])
      if (!counts.has(reason)) this.queued.remove({ policy, reason });
    for (const [reason, count] of counts) this.queued.set({ policy, reason }, count);
    this.queuedReasons.set(policy, new Set(counts.keys()));
  }

  forget(policy: string): void {
    this.holders.remove({ policy });
    for (const reason of this.queuedReasons.get(policy) ?? []) this.queued.remove({ policy, reason });
    this.queuedReasons.delete(policy);
  }

  completed(policy: string, protocol: MaintenanceProtocol, seconds: number): void {
    this.completions.inc({ policy, protocol });
    this.duration.observe({ policy, protocol }, Math.max(0, seconds));
  }

  released(policy: string, reason: string): void {
    this.expirations.inc({ policy, reason });
  }

  /** Every node's reboot request, set whole (nodes not listed read 0 or are removed). */
  rebootRequests(asking: ReadonlySet<string>, known: Iterable<string>): void {
    for (const node of known) this.rebootRequired.set({ node }, asking.has(node) ? 1 : 0);
  }

  nodeGone(node: string): void {
    this.rebootRequired.remove({ node });
  }
}
