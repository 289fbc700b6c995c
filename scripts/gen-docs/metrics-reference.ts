/**
 * docs/reference/metrics.md: every metric the operator registers (name, type, labels, help), read
 * from a registry built as the operator builds it, so a new or renamed metric changes the page.
 */
import { DisruptionMetrics } from '../../src/controllers/disruption/disruption-metrics.js';
import { MaintenanceMetrics } from '../../src/controllers/maintenance/maintenance-metrics.js';
import { StageMetrics } from '../../src/controllers/nodeop/stage-metrics.js';
import { SkyhookMetrics } from '../../src/controllers/skyhook/skyhook-metrics.js';
import { RuntimeMetrics } from '../../src/kube/metrics.js';

interface MetricInfo {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly labels: readonly string[];
}

export function operatorMetrics(): MetricInfo[] {
  const runtime = new RuntimeMetrics(undefined, { defaults: false });
  new SkyhookMetrics(runtime.registry);
  new StageMetrics(runtime.registry);
  new DisruptionMetrics(runtime.registry);
  new MaintenanceMetrics(runtime.registry);
  return runtime.registry
    .getMetricsAsArray()
    .map((metric) => {
      const m = metric as unknown as { name: string; help: string; type: unknown; labelNames?: string[] };
      return { name: m.name, type: String(m.type), help: m.help, labels: m.labelNames ?? [] };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');

export function renderMetricsPage(): string {
  const lines = [
    '# Metrics',
    '',
    "<!-- Generated from the operator's metric registry by `npm run gen:docs`; do not edit. -->",
    '',
    'The operator serves these on `:8080/metrics` (Service `skyhook-operator-metrics`), beside Node.js ' +
      'process metrics (`process_*`, `nodejs_*`). How to scrape them, the dashboard and the alert rules: ' +
      '[observability](../operations/observability.md).',
    '',
    "A Skyhook's labelled series exist from its first reconcile, 0 until something is counted: " +
      '`skyhook_status` and `skyhook_node_status_count` for every status, `skyhook_package_state_count` and ' +
      '`skyhook_package_stage_count` for every state and stage of each of its packages, and the ' +
      '`skyhook_rollout_*` series for each compartment of its rollout (`__default__` with policy `legacy` ' +
      'without a DeploymentPolicy), the current batch at 1. A query or alert on a value of 0 finds it rather ' +
      'than nothing. A deleted Skyhook loses all of its series.',
    '',
    '| metric | type | labels | meaning |',
    '| --- | --- | --- | --- |',
  ];
  for (const metric of operatorMetrics())
    lines.push(
      `| \`${metric.name}\` | ${metric.type} | ${metric.labels.map((l) => `\`${l}\``).join(', ')} | ${cell(metric.help)} |`,
    );
  return `${lines.join('\n')}\n`;
}
