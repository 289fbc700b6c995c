/**
 * The Prometheus check of a health gate (I/O): an instant query that must return no sample, or the
 * firing alerts (`/api/v1/alerts`, as kured reads them) filtered by alertname regexps, none of which
 * may count. Answers are cached briefly per URL and query, so several Skyhooks and nodes waiting on
 * the same gate ask Prometheus once per re-check, and a Prometheus that cannot be asked fails the
 * gate (closed) with the reason, like kured.
 */
import type { GateCheckResult, PrometheusCheck } from '../../../../api/health-gates.js';
import { firstLine } from './cel-gate.js';

/** The HTTP GET the check uses; the operator passes `fetch`, tests may pass their own. */
export type HttpGet = (
  url: string,
  init: { signal: AbortSignal },
) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;

const REQUEST_TIMEOUT_MS = 5_000;

interface PrometheusResponse {
  status?: string;
  error?: string;
  data?: { resultType?: string; result?: unknown; alerts?: { labels?: Record<string, string>; state?: string }[] };
}

export class PrometheusGate {
  private readonly cache = new Map<string, { at: number; result: Promise<GateCheckResult> }>();
  private readonly get: HttpGet;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(options: { get?: HttpGet; ttlMs?: number; now?: () => number } = {}) {
    this.get = options.get ?? ((url, init) => fetch(url, init));
    this.ttlMs = options.ttlMs ?? 4_000;
    this.now = options.now ?? Date.now;
  }

  /** The check's result for `node` (a query may name it as `$node`). */
  check(check: PrometheusCheck, node: string): Promise<GateCheckResult> {
    const base = check.url.replace(/\/+$/, '');
    const url =
      check.query !== undefined
        ? `${base}/api/v1/query?query=${encodeURIComponent(check.query.replaceAll('$node', node))}`
        : `${base}/api/v1/alerts`;
    const key = `${url}\n${check.alerts?.match ?? ''}\n${check.alerts?.ignore ?? ''}`;
    const now = this.now();
    const cached = this.cache.get(key);
    if (cached && now - cached.at < this.ttlMs) return cached.result;
    for (const [k, entry] of this.cache) if (now - entry.at >= this.ttlMs) this.cache.delete(k);
    const result = this.ask(url, check);
    this.cache.set(key, { at: now, result });
    return result;
  }

  private async ask(url: string, check: PrometheusCheck): Promise<GateCheckResult> {
    let body: PrometheusResponse;
    try {
      const response = await this.get(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      if (!response.ok) return { passed: false, detail: `Prometheus answered HTTP ${response.status} for ${url}` };
      body = (await response.json()) as PrometheusResponse;
    } catch (error) {
      return { passed: false, detail: `Prometheus cannot be asked (${url}): ${firstLine(error)}` };
    }
    if (body.status !== 'success') return { passed: false, detail: `Prometheus error: ${body.error ?? 'no status'}` };
    return check.query !== undefined ? queryResult(body, check.query) : alertsResult(body, check);
  }
}

/** An empty vector or matrix (or a scalar 0) passes; otherwise the samples are named. */
function queryResult(body: PrometheusResponse, query: string): GateCheckResult {
  const result = body.data?.result;
  if (body.data?.resultType === 'scalar' && Array.isArray(result))
    return Number(result[1]) === 0 ? { passed: true } : { passed: false, detail: `query ${query} = ${result[1]}` };
  if (!Array.isArray(result) || result.length === 0) return { passed: true };
  const series = (result as { metric?: Record<string, string> }[])
    .slice(0, 3)
    .map((sample) => seriesName(sample.metric));
  return {
    passed: false,
    detail: `query ${query} returned ${result.length} sample(s): ${series.join(', ')}${result.length > 3 ? ', …' : ''}`,
  };
}

function seriesName(metric: Record<string, string> | undefined): string {
  const { __name__: name, ...labels } = metric ?? {};
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return `${name ?? ''}{${pairs.join(',')}}`;
}

/** Firing alerts whose alertname matches `match` (when set) and not `ignore` (when set). */
function alertsResult(body: PrometheusResponse, check: PrometheusCheck): GateCheckResult {
  const match = check.alerts?.match ? new RegExp(check.alerts.match) : undefined;
  const ignore = check.alerts?.ignore ? new RegExp(check.alerts.ignore) : undefined;
  const firing = (body.data?.alerts ?? [])
    .filter((alert) => alert.state === 'firing')
    .map((alert) => alert.labels?.['alertname'] ?? '(no alertname)')
    .filter((name) => (match === undefined || match.test(name)) && !ignore?.test(name));
  const names = [...new Set(firing)].sort();
  return names.length === 0 ? { passed: true } : { passed: false, detail: `alerts firing: ${names.join(', ')}` };
}
