/** A Clock for unit tests: time moves only when the test advances it; due timers run in order. */
import type { Clock, TimerHandle } from '../../../src/kube/clock.js';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/** Lets pending promise callbacks (and one macrotask turn) run. */
export const settle = (): Promise<void> => new Promise((resolveTurn) => setImmediate(resolveTurn));

export class FakeClock implements Clock {
  private time = 1_000_000;
  private nextId = 1;
  private timers: Timer[] = [];

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: this.nextId++, at: this.time + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Delays of the pending timers, soonest first. */
  pending(): number[] {
    return this.timers.map((t) => t.at - this.time).sort((a, b) => a - b);
  }

  /** Moves time forward by `ms`, running each timer that falls due (and the promises it settles). */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    await settle();
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = due.at;
      due.fn();
      await settle();
    }
    this.time = target;
  }
}
