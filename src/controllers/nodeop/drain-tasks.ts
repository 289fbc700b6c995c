/**
 * Drains run in the background so a reconcile never blocks for a drain's whole timeout. The
 * reconcile polls: the first poll starts the drain, later polls return nothing until it has
 * finished, then its result once (and the finished drain wakes the NodeOp's key). Nothing here is
 * state that matters across restarts: a new process simply drains again, with the deadline the
 * caller keeps in the NodeOp's status.
 */
import type { DrainResult } from '../../jobs/drain.js';

interface Task {
  controller: AbortController;
  result?: DrainResult;
  error?: unknown;
  /** What the running drain last said it waits for. */
  progress?: string;
}

export class DrainTasks {
  private readonly tasks = new Map<string, Task>();

  /**
   * The result of the drain `id` if it has finished (forgotten afterwards); otherwise undefined,
   * starting it with `run` when it is not running. `onChange` runs when a started drain ends or
   * reports new progress (through `report`; see `progress`).
   * A drain that failed with an error (not a verdict on the node) throws it here once, so the
   * reconcile retries with backoff and the next poll drains again.
   */
  poll(
    id: string,
    run: (signal: AbortSignal, report: (progress: string | undefined) => void) => Promise<DrainResult>,
    onChange: () => void,
  ): DrainResult | undefined {
    const existing = this.tasks.get(id);
    if (existing?.result || existing?.error !== undefined) {
      this.tasks.delete(id);
      if (existing.result) return existing.result;
      throw existing.error;
    }
    if (existing) return undefined;
    const task: Task = { controller: new AbortController() };
    this.tasks.set(id, task);
    const report = (progress: string | undefined): void => {
      if (task.controller.signal.aborted || task.progress === progress) return;
      task.progress = progress;
      onChange();
    };
    run(task.controller.signal, report).then(
      (result) => {
        if (task.controller.signal.aborted) return;
        task.result = result;
        onChange();
      },
      (e: unknown) => {
        if (task.controller.signal.aborted) return;
        task.error = e ?? new Error('drain failed');
        onChange();
      },
    );
    return undefined;
  }

  /** What the running drain `id` last reported waiting for, if anything. */
  progress(id: string): string | undefined {
    return this.tasks.get(id)?.progress;
  }

  /** Stops the drains whose id starts with `prefix` (a deleted NodeOp), or all of them. */
  abort(prefix = ''): void {
    for (const [id, task] of this.tasks) {
      if (!id.startsWith(prefix)) continue;
      task.controller.abort();
      this.tasks.delete(id);
    }
  }
}
