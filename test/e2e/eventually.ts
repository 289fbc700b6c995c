/**
 * Polling for state that follows another by design: an admission policy the API server loads a moment
 * after it is created, a metric the operator sets after the status write a test's watch has already seen.
 * The caller asserts on the value returned, so a state that never comes still fails with the last value.
 */

export interface EventuallyOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/** Polls `probe` until `accept` holds for its result or the time runs out; returns the last result either way. */
export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  { timeoutMs = 10_000, intervalMs = 200 }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Polls `probe` until it returns something other than `undefined`, and returns that: for state that follows
 * another by design and that the test cannot go on without (a condition is a probe returning `true | undefined`).
 * Throws naming `what` if it has not come within `timeoutMs`, with what `describe` says of the state then
 * (what was there instead: a rare timeout is understood from its message, not rerun until it recurs).
 */
export async function waitForValue<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  {
    timeoutMs,
    intervalMs = 200,
    describe,
  }: { timeoutMs: number; intervalMs?: number; describe?: () => Promise<string> },
): Promise<T> {
  const value = await eventually(probe, (found) => found !== undefined, { timeoutMs, intervalMs });
  if (value !== undefined) return value;
  const state = describe
    ? `; instead: ${await describe().catch((e: unknown) => `(could not tell: ${String(e)})`)}`
    : '';
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${state}`);
}

/** The operator's /metrics text. */
export async function scrapeMetrics(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  return response.text();
}

/**
 * The operator's /metrics text once every line of `present` is in it and none of `absent`: the reconcile
 * reports its metrics after its writes (and cleanup), so a test that saw the status write may scrape first.
 */
export function metricsWith(port: number, present: readonly string[], absent: readonly string[] = []): Promise<string> {
  return eventually(
    () => scrapeMetrics(port),
    (text) => present.every((line) => text.includes(line)) && absent.every((line) => !text.includes(line)),
  );
}
