/**
 * Independent writes run concurrently under a bound (the Skyhook controller's `writeConcurrency`,
 * one limiter shared by its workers so the API server sees at most that many of its writes in
 * flight), with the sequential loop's failure semantics: after the first failure no further write
 * starts, the ones in flight settle (each notes its own write expectation when it succeeds), and
 * then that first failure is thrown, so the reconcile fails and is retried as before.
 */
import pLimit, { type LimitFunction } from 'p-limit';

/** The default bound: enough to hide a loaded API server's round trips, few enough not to flood it. */
export const DEFAULT_WRITE_CONCURRENCY = 32;

export type WriteLimit = LimitFunction;

/** A limiter of `concurrency` writes in flight (at least one). */
export function writeLimit(concurrency: number = DEFAULT_WRITE_CONCURRENCY): WriteLimit {
  return pLimit(Math.max(1, Math.floor(concurrency)));
}

/** Failures after the first, which is the one thrown (for a log line; they are not lost silently). */
export type LaterFailures = (errors: unknown[]) => void;

/** Runs every task under `limit`; see the module comment for what a failure does. */
export async function runBounded(
  limit: WriteLimit,
  tasks: ReadonlyArray<() => Promise<void>>,
  onLaterFailures?: LaterFailures,
): Promise<void> {
  let first: { error: unknown } | undefined;
  const later: unknown[] = [];
  await Promise.all(
    tasks.map((task) =>
      limit(async () => {
        if (first) return;
        try {
          await task();
        } catch (e) {
          if (first) later.push(e);
          else first = { error: e };
        }
      }),
    ),
  );
  if (!first) return;
  if (later.length > 0) onLaterFailures?.(later);
  throw first.error;
}
