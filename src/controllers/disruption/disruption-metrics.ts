/**
 * The DisruptionBudgets' metrics, named like the Skyhook ones (skyhook-metrics.ts): per budget the
 * nodes it allows, the nodes disrupted and the nodes waiting (gauges the status controller sets),
 * and the refusals by kind of holder (a counter the arbiter increments), so an alert can tell a
 * budget that holds rollouts back for long.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export class DisruptionMetrics {
  readonly refusals: Counter<'budget_name' | 'holder_kind'>;
  readonly max: Gauge<'budget_name'>;
  readonly disrupted: Gauge<'budget_name'>;
  readonly waiting: Gauge<'budget_name'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const gauge = (name: string, help: string) => new Gauge({ name, help, labelNames: ['budget_name'], registers });
    this.refusals = new Counter({
      name: 'skyhook_disruption_budget_refusals_total',
      help: 'Requests to disrupt a node that a DisruptionBudget refused, by budget and kind of holder',
      labelNames: ['budget_name', 'holder_kind'],
      registers,
    });
    this.max = gauge('skyhook_disruption_budget_max_count', 'Nodes the DisruptionBudget allows disrupted at once');
    this.disrupted = gauge(
      'skyhook_disruption_budget_disrupted_count',
      'Nodes the DisruptionBudget covers disrupted now',
    );
    this.waiting = gauge('skyhook_disruption_budget_waiting_count', 'Nodes waiting for a slot of the DisruptionBudget');
  }

  /** The gauges of one budget; `undefined` removes a deleted budget's series. */
  report(budget: string, values: { max: number; disrupted: number; waiting: number } | undefined): void {
    for (const [gauge, key] of [
      [this.max, 'max'],
      [this.disrupted, 'disrupted'],
      [this.waiting, 'waiting'],
    ] as const) {
      if (values === undefined) gauge.remove({ budget_name: budget });
      else gauge.set({ budget_name: budget }, values[key]);
    }
  }
}
