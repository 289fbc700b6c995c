/**
 * How long non-interruptible pods have held each node's interrupt (plan/non-interrupt-wait.ts), from
 * the wait's start the planner keeps on the node (`nonInterruptWaitSince_<scr>`), so an operator
 * restart does not reset it:
 * - `skyhook_node_non_interrupt_wait_seconds{skyhook_name,node}`: the current wait of each held node,
 *   computed at scrape time, so it keeps growing while nothing is reconciled;
 * - `skyhook_non_interrupt_wait_duration_seconds{skyhook_name}`: a histogram of the waits that ended
 *   (seen by this process both waiting and then not).
 */
import { Gauge, Histogram, type Registry } from 'prom-client';

const HOUR = 3600;
/** Waits run from seconds (a pod about to finish) to days (a training run). */
const BUCKETS = [60, 300, 900, HOUR, 4 * HOUR, 12 * HOUR, 24 * HOUR, 72 * HOUR, 168 * HOUR];

export class NonInterruptWaitMetrics {
  private readonly current: Gauge<'skyhook_name' | 'node'>;
  private readonly ended: Histogram<'skyhook_name'>;
  /** SCR → node → wait start (ms), as of the SCR's last report. */
  private readonly starts = new Map<string, Map<string, number>>();
  private readonly now: () => number;

  constructor(registry: Registry, now: () => number = Date.now) {
    this.now = now;
    this.current = new Gauge({
      name: 'skyhook_node_non_interrupt_wait_seconds',
      help: "Seconds since non-interruptible pods started holding the node's interrupt for the Skyhook",
      labelNames: ['skyhook_name', 'node'],
      registers: [registry],
      collect: () => this.refresh(),
    });
    this.ended = new Histogram({
      name: 'skyhook_non_interrupt_wait_duration_seconds',
      help: 'Waits for non-interruptible pods that ended (the node went on with its interrupt or left the Skyhook)',
      labelNames: ['skyhook_name'],
      buckets: BUCKETS,
      registers: [registry],
    });
  }

  /** `starts`: node → wait start (ms) of the SCR's nodes held now; a node held before and not now ended its wait. */
  report(skyhook: string, starts: ReadonlyMap<string, number>, nowMs: number): void {
    for (const [node, since] of this.starts.get(skyhook) ?? []) {
      if (starts.get(node) !== since) this.ended.observe({ skyhook_name: skyhook }, Math.max(0, nowMs - since) / 1000);
    }
    if (starts.size === 0) this.starts.delete(skyhook);
    else this.starts.set(skyhook, new Map(starts));
  }

  /** The SCR was deleted: its waits are not observed as ended. */
  forget(skyhook: string): void {
    this.starts.delete(skyhook);
  }

  private refresh(): void {
    this.current.reset();
    const now = this.now();
    for (const [skyhook, nodes] of this.starts)
      for (const [node, since] of nodes)
        this.current.set({ skyhook_name: skyhook, node }, Math.max(0, now - since) / 1000);
  }
}
