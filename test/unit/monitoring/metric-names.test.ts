/**
 * The dashboard and the alert rules of config/monitoring/ name only series the operator exports:
 * every metric (histogram series by their base name) must be registered in a registry built as the
 * operator builds it (manager: runtime + default process metrics; controllers: Skyhook and stage
 * metrics), and every label a selector matches on must be one of that metric's labels. So renaming
 * a metric or a label in src/ breaks this test until the dashboard and the rules follow.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { DisruptionMetrics } from '../../../src/controllers/disruption/disruption-metrics.js';
import { MaintenanceMetrics } from '../../../src/controllers/maintenance/maintenance-metrics.js';
import { StageMetrics } from '../../../src/controllers/nodeop/stage-metrics.js';
import { SkyhookMetrics } from '../../../src/controllers/skyhook/skyhook-metrics.js';
import { RuntimeMetrics } from '../../../src/kube/metrics.js';
import { labelValuesSelector, selectorsOf, type Selector } from './promql-selectors.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MONITORING = join(ROOT, 'config/monitoring');
/** Series Prometheus makes itself, and the target labels it adds to every scraped series. */
const PROMETHEUS_SERIES = new Set(['up']);
const TARGET_LABELS = ['job', 'instance', 'namespace', 'pod', 'service', 'container', 'endpoint'];
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];
/** The modules that create metrics; a new one must be added to operatorRegistry() below. */
const METRIC_MODULES = [
  'src/controllers/disruption/disruption-metrics.ts',
  'src/controllers/maintenance/maintenance-metrics.ts',
  'src/controllers/nodeop/stage-metrics.ts',
  // Created by SkyhookMetrics, so already in operatorRegistry().
  'src/controllers/skyhook/non-interrupt-wait-metrics.ts',
  'src/controllers/skyhook/reconcile-phases.ts',
  'src/controllers/skyhook/requeue-reasons.ts',
  'src/controllers/skyhook/skyhook-metrics.ts',
  'src/kube/metrics.ts',
];

function operatorRegistry(): Map<string, { type: string; labels: string[] }> {
  const runtime = new RuntimeMetrics(undefined, { defaults: true });
  new SkyhookMetrics(runtime.registry);
  new StageMetrics(runtime.registry);
  new DisruptionMetrics(runtime.registry);
  new MaintenanceMetrics(runtime.registry);
  return new Map(
    runtime.registry.getMetricsAsArray().map((metric) => {
      const {
        name,
        labelNames = [],
        type,
      } = metric as unknown as { name: string; labelNames?: string[]; type: string };
      return [name, { type: String(type), labels: labelNames }];
    }),
  );
}

interface Query {
  where: string;
  expr: string;
  /** A Grafana `label_values(…)` variable query rather than PromQL. */
  labelValues?: boolean;
}

/** Every `expr` of the dashboard's panels and every variable query. */
function dashboardQueries(): Query[] {
  const dashboard = JSON.parse(readFileSync(join(MONITORING, 'grafana-dashboard.json'), 'utf8')) as {
    panels: { title: string; targets?: { expr: string }[] }[];
    templating: { list: { name: string; query?: string | { query: string } }[] };
  };
  const panels = dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr })),
  );
  const variables = dashboard.templating.list
    .map((variable) => ({
      where: `variable ${variable.name}`,
      expr: typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? ''),
    }))
    .filter((v) => v.expr.includes('('))
    .map((v) => ({ ...v, labelValues: true }));
  return [...panels, ...variables];
}

function ruleQueries(): Query[] {
  const rule = parse(readFileSync(join(MONITORING, 'prometheus-rule.yaml'), 'utf8')) as {
    spec: { groups: { rules: { alert: string; expr: string }[] }[] };
  };
  return rule.spec.groups.flatMap((group) => group.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
}

/** What is wrong with one selector against the registry, if anything. */
function problemOf(selector: Selector, registry: ReturnType<typeof operatorRegistry>): string | undefined {
  if (PROMETHEUS_SERIES.has(selector.metric)) return undefined;
  const suffix = HISTOGRAM_SUFFIXES.find((s) => selector.metric.endsWith(s));
  const histogram = suffix ? registry.get(selector.metric.slice(0, -suffix.length)) : undefined;
  const metric = registry.get(selector.metric) ?? (histogram?.type === 'histogram' ? histogram : undefined);
  if (!metric) return `metric ${selector.metric} is not exported by the operator`;
  const known = [...metric.labels, ...TARGET_LABELS, ...(suffix === '_bucket' ? ['le'] : [])];
  const unknown = selector.labels.filter((label) => !known.includes(label));
  return unknown.length > 0 ? `metric ${selector.metric} has no label ${unknown.join(', ')}` : undefined;
}

function problemsOf(queries: Query[]): string[] {
  const registry = operatorRegistry();
  return queries.flatMap(({ where, expr, labelValues }) => {
    const selectors = labelValues
      ? [labelValuesSelector(expr) ?? { metric: `unparsed label_values query ${expr}`, labels: [] }]
      : selectorsOf(expr);
    return selectors
      .map((s) => problemOf(s, registry))
      .filter((p): p is string => p !== undefined)
      .map((p) => `${where}: ${p}`);
  });
}

describe("config/monitoring against the operator's metrics registry", () => {
  it('the dashboard queries only exported metrics and their labels', () => {
    expect(problemsOf(dashboardQueries())).toEqual([]);
  });

  it('the alert rules query only exported metrics and their labels', () => {
    expect(problemsOf(ruleQueries())).toEqual([]);
  });

  it('covers what the issue asks to look at (so an emptied query list cannot pass)', () => {
    const selectors = (q: Query): Selector[] =>
      q.labelValues ? [labelValuesSelector(q.expr)].filter((s): s is Selector => s !== undefined) : selectorsOf(q.expr);
    const used = new Set([...dashboardQueries(), ...ruleQueries()].flatMap(selectors).map((s) => s.metric));
    for (const metric of [
      'skyhook_status',
      'skyhook_node_status_count',
      'skyhook_rollout_progress_percent',
      'skyhook_stage_duration_seconds_bucket',
      'skyhook_node_waiting_count',
      'skyhook_node_waiting_since_timestamp_seconds',
      'controller_runtime_reconcile_errors_total',
      'up',
    ]) {
      expect(used).toContain(metric);
    }
  });

  it('knows every module that creates metrics (a new one must be registered above)', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
      );
    const creating = files(join(ROOT, 'src')).filter(
      (file) => file.endsWith('.ts') && /new (Gauge|Counter|Histogram|Summary)\b/.test(readFileSync(file, 'utf8')),
    );
    expect(creating.map((file) => relative(ROOT, file)).sort()).toEqual(METRIC_MODULES);
  });
});

describe('selectorsOf', () => {
  it('takes metric names and matcher labels, not functions, keywords, grouping labels, strings or variables', () => {
    expect(
      selectorsOf(
        'histogram_quantile(0.95, sum by (le, stage) (rate(a_bucket{x=~"$v", y="b{c}"}[$__rate_interval]))) > 1e3 and on() b offset 5m',
      ),
    ).toEqual([
      { metric: 'a_bucket', labels: ['x', 'y'] },
      { metric: 'b', labels: [] },
    ]);
  });

  it('finds a misspelt metric and label', () => {
    const registry = operatorRegistry();
    expect(problemOf({ metric: 'skyhook_statuz', labels: [] }, registry)).toContain('skyhook_statuz is not exported');
    expect(problemOf({ metric: 'skyhook_status', labels: ['skyhook'] }, registry)).toContain('has no label skyhook');
    expect(problemOf({ metric: 'workqueue_depth_bucket', labels: [] }, registry)).toContain('not exported');
  });
});
