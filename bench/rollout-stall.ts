/**
 * When a rollout benchmark gives up: a rollout that still finishes stage Jobs is let run (up to its
 * window, a generous cap), one that finished none for `stallMs` is stopped at once and reported as
 * stalled. So a large rollout on a slow machine shows that it completes, however long the machine
 * needs, and a stuck one ends in minutes instead of waiting out the cap. Pure, unit-tested.
 */
export class StallWatch {
  private readonly stallMs: number;
  private done = 0;
  private since: number;

  constructor(stallMs: number, now: number) {
    this.stallMs = stallMs;
    this.since = now;
  }

  /** Notes how many stage Jobs are done at `now`; says why the run is stalled, once it is. */
  check(done: number, now: number): string | undefined {
    if (done !== this.done) {
      this.done = done;
      this.since = now;
      return undefined;
    }
    const quietMs = now - this.since;
    if (quietMs < this.stallMs) return undefined;
    return `stalled: no stage Job finished for ${Math.round(quietMs / 1000)} s (${done} done)`;
  }
}
