/**
 * The series selectors of a PromQL expression (metric name and the label names it matches on), so
 * that the dashboard and alert tests can check them against the operator's registry. Not a PromQL
 * parser: it drops strings, range/subquery brackets, Grafana variables and grouping clauses, then
 * takes every identifier that is not a keyword and not called as a function.
 */
export interface Selector {
  metric: string;
  labels: string[];
}

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);

export function selectorsOf(expr: string): Selector[] {
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\boffset\s+\S+/g, ' ');
  const selectors: Selector[] = [];
  for (const match of text.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?(\s*\()?/g)) {
    const [, metric = '', matchers, call] = match;
    if (call !== undefined || KEYWORDS.has(metric.toLowerCase())) continue;
    const labels = [...(matchers ?? '').matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1] ?? '');
    selectors.push({ metric, labels });
  }
  return selectors;
}

/** Grafana's `label_values(metric, label)` variable query: the metric and the label it lists. */
export function labelValuesSelector(query: string): Selector | undefined {
  const match = /^\s*label_values\(\s*([a-zA-Z_:][\w:]*)\s*(?:\{[^}]*\})?\s*,\s*(\w+)\s*\)\s*$/.exec(query);
  return match ? { metric: match[1] ?? '', labels: [match[2] ?? ''] } : undefined;
}
