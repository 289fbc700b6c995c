/**
 * Time as a dependency: the queue, the informer and the leader elector take a Clock so unit tests
 * drive them with a fake one instead of sleeping. Timers are unref'd: pending retries alone must
 * never keep a process alive (the health server and the watches do that).
 */
export type TimerHandle = unknown;

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms` on `clock`. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolveSleep) => clock.setTimeout(resolveSleep, ms));
}

/** client-go's wait.Jitter: a duration stretched by a random factor in [1, 1 + factor). */
export function jittered(ms: number, factor: number, random: () => number = Math.random): number {
  return factor > 0 ? ms + random() * factor * ms : ms;
}
