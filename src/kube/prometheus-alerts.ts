/**
 * The Prometheus alert gate, as kured's `--prometheus-url` works (pkg/alerts): one instant query of
 * `ALERTS`, the alert names of samples with an `alertname` and a non-zero value, filtered by a regular
 * expression that is an ignore list (default) or an allow list (`matchOnly`), optionally firing alerts
 * only. Its own module because more than one actor gates on alerts (a maintenance reboot slot; a
 * rollout's health gate): the filter is pure, the query is a plain HTTP GET with a timeout.
 */

export interface AlertFilter {
  /** A JavaScript regular expression over alert names (kured's `--alert-filter-regexp`). */
  regexp?: string;
  /** true: only alerts matching `regexp` count; false (default): matching alerts are ignored. */
  matchOnly?: boolean;
  /** true: only `alertstate="firing"` alerts count (pending ones are ignored). */
  firingOnly?: boolean;
}

/** One sample of the `ALERTS` vector, as Prometheus' HTTP API returns it. */
export interface AlertSample {
  metric: Record<string, string>;
  /** [unix seconds, value as a string] */
  value: [number, string];
}

/** The sorted, distinct names of the alerts that count under `filter` (pure; kured's ActiveAlerts). */
export function activeAlertNames(samples: readonly AlertSample[], filter: AlertFilter = {}): string[] {
  const pattern = filter.regexp ? new RegExp(filter.regexp) : undefined;
  const matchOnly = filter.matchOnly === true;
  const names = new Set<string>();
  for (const sample of samples) {
    const name = sample.metric['alertname'];
    if (name === undefined || Number(sample.value[1]) === 0) continue;
    if (pattern && pattern.test(name) !== matchOnly) continue;
    if (filter.firingOnly && sample.metric['alertstate'] !== 'firing') continue;
    names.add(name);
  }
  return [...names].sort();
}

/** Why an alert filter cannot be used (an invalid regular expression), or undefined. */
export function alertFilterError(filter: AlertFilter): string | undefined {
  if (!filter.regexp) return undefined;
  try {
    new RegExp(filter.regexp);
    return undefined;
  } catch (e) {
    return `invalid alert filter regexp ${JSON.stringify(filter.regexp)}: ${(e as Error).message}`;
  }
}

interface QueryResponse {
  status?: string;
  error?: string;
  data?: { resultType?: string; result?: unknown };
}

/**
 * `GET <url>/api/v1/query?query=ALERTS`: the samples of the instant vector. Throws on a transport
 * error, a timeout, a non-2xx answer or anything but a vector (the caller treats that as blocked,
 * as kured does: an unreachable Prometheus must not let reboots through).
 */
export async function queryAlerts(url: string, timeoutMs = 10_000, signal?: AbortSignal): Promise<AlertSample[]> {
  const endpoint = new URL('api/v1/query', url.endsWith('/') ? url : `${url}/`);
  endpoint.searchParams.set('query', 'ALERTS');
  const timeout = AbortSignal.timeout(timeoutMs);
  const response = await fetch(endpoint, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  const text = await response.text();
  let body: QueryResponse;
  try {
    body = JSON.parse(text) as QueryResponse;
  } catch {
    throw new Error(`Prometheus at ${url} answered ${response.status} with no JSON: ${text.slice(0, 200)}`);
  }
  if (!response.ok || body.status !== 'success')
    throw new Error(`Prometheus at ${url} answered ${response.status}: ${body.error ?? text.slice(0, 200)}`);
  if (body.data?.resultType !== 'vector' || !Array.isArray(body.data.result))
    throw new Error(`Prometheus at ${url}: ALERTS gave ${body.data?.resultType ?? 'no result'}, not a vector`);
  return body.data.result as AlertSample[];
}
