/**
 * Quantiles from a Prometheus histogram's cumulative buckets, the way PromQL's histogram_quantile
 * estimates them: find the bucket the rank falls into and interpolate linearly inside it (from 0 for
 * the first bucket). Works for any bucket layout, so finer buckets in kube/metrics.ts only sharpen
 * the figures. Pure, unit-tested.
 */

/** One cumulative bucket: how many observations were <= `le` (Infinity for +Inf). */
export interface Bucket {
  le: number;
  count: number;
}

function labelsOf(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

/**
 * The buckets of `metric` (the name without `_bucket`) whose labels include `match`, from a text
 * exposition, sorted by bound. Series differing in other labels are summed per bound.
 */
export function parseHistogram(text: string, metric: string, match: Record<string, string>): Bucket[] {
  const byLe = new Map<number, number>();
  const prefix = `${metric}_bucket{`;
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const close = line.lastIndexOf('}');
    const labels = labelsOf(line.slice(prefix.length, close));
    if (!Object.entries(match).every(([k, v]) => labels[k] === v)) continue;
    const leText = labels['le'];
    if (leText === undefined) continue;
    const le = leText === '+Inf' ? Infinity : Number(leText);
    byLe.set(le, (byLe.get(le) ?? 0) + Number(line.slice(close + 1).trim()));
  }
  return [...byLe.entries()].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/** The observations made between two readings of the same histogram (`after` minus `before`). */
export function histogramDelta(before: Bucket[], after: Bucket[]): Bucket[] {
  const earlier = new Map(before.map((b) => [b.le, b.count]));
  return after.map((b) => ({ le: b.le, count: b.count - (earlier.get(b.le) ?? 0) }));
}

/**
 * The q-quantile (0..1) estimated from cumulative buckets; NaN without observations. A rank in the
 * +Inf bucket returns the highest finite bound, as histogram_quantile does (the true value is above).
 */
export function histogramQuantile(buckets: Bucket[], q: number): number {
  const total = buckets.at(-1)?.count ?? 0;
  if (total <= 0 || buckets.length === 0) return NaN;
  const rank = q * total;
  let lowerLe = 0;
  let lowerCount = 0;
  for (const { le, count } of buckets) {
    if (count >= rank && count > lowerCount) {
      if (le === Infinity) return lowerLe;
      return lowerLe + (le - lowerLe) * ((rank - lowerCount) / (count - lowerCount));
    }
    lowerLe = le === Infinity ? lowerLe : le;
    lowerCount = count;
  }
  return lowerLe;
}
