/**
 * The keyed work queue's client-go semantics, driven by a fake clock: dedup, one worker per key,
 * earliest-timer addAfter, per-key exponential backoff with a cap, forget, shutdown and drain, and
 * runWorkers' handling of reconcile results, with the metrics they report.
 */
import { describe, expect, it } from '@jest/globals';
import { RuntimeMetrics } from '../../../src/kube/metrics.js';
import { runWorkers, WorkQueue, type ReconcileResult } from '../../../src/kube/queue.js';
import { silentLogger } from '../../../src/kube/logger.js';
import { FakeClock, settle } from './fake-clock.js';

function setup(options: { baseDelayMs?: number; maxDelayMs?: number } = {}) {
  const clock = new FakeClock();
  const metrics = new RuntimeMetrics();
  const queue = new WorkQueue({ name: 'test', clock, metrics, ...options });
  return { clock, metrics, queue };
}

async function metricValue(metrics: RuntimeMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const sample = (metric?.values ?? []).find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return sample?.value ?? 0;
}

/** Takes every key that is ready right now, in order. */
async function takeReady(queue: WorkQueue): Promise<string[]> {
  const keys: string[] = [];
  while (queue.length > 0) keys.push((await queue.get())!);
  return keys;
}

describe('WorkQueue', () => {
  it('holds a key once however often it is added, in first-add order', async () => {
    const { queue, metrics } = setup();
    for (const key of ['a', 'b', 'a', 'c', 'b', 'a']) queue.add(key);
    expect(queue.length).toBe(3);
    expect(await takeReady(queue)).toEqual(['a', 'b', 'c']);
    expect(await metricValue(metrics, 'workqueue_adds_total', { name: 'test' })).toBe(3);
  });

  it('does not hand a key in processing to another worker; an add meanwhile requeues it on done', async () => {
    const { queue } = setup();
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    queue.add('a');
    expect(queue.length).toBe(0);
    let second: string | undefined;
    void queue.get().then((key) => (second = key));
    await settle();
    expect(second).toBeUndefined();
    queue.done('a');
    await settle();
    expect(second).toBe('a');
    queue.done('a');
    expect(queue.length).toBe(0);
  });

  it('a key done without being re-added is not queued again', async () => {
    const { queue } = setup();
    queue.add('a');
    queue.done((await queue.get())!);
    expect(queue.length).toBe(0);
    expect(queue.inFlight).toBe(0);
  });

  it('addAfter keeps only the earliest pending time per key', async () => {
    const { queue, clock } = setup();
    queue.addAfter('a', 100);
    queue.addAfter('a', 50);
    queue.addAfter('a', 200);
    expect(clock.pending()).toEqual([50]);
    await clock.advance(49);
    expect(queue.length).toBe(0);
    await clock.advance(1);
    expect(await takeReady(queue)).toEqual(['a']);
    await clock.advance(1000);
    expect(queue.length).toBe(0);
  });

  it('addAfter with a delay of 0 or less adds at once', async () => {
    const { queue } = setup();
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    expect(await takeReady(queue)).toEqual(['a', 'b']);
  });

  it('addRateLimited backs off 5 ms doubling per failure up to the cap, per key; forget resets', async () => {
    const { queue, clock, metrics } = setup({ maxDelayMs: 40 });
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      queue.addRateLimited('a');
      delays.push(clock.pending()[0]!);
      await clock.advance(delays[i]!);
      expect(await takeReady(queue)).toEqual(['a']);
      queue.done('a');
    }
    expect(delays).toEqual([5, 10, 20, 40, 40, 40]);
    expect(queue.numRequeues('a')).toBe(6);
    queue.addRateLimited('b');
    expect(clock.pending()).toEqual([5]);
    queue.forget('a');
    expect(queue.numRequeues('a')).toBe(0);
    queue.addRateLimited('a');
    expect(clock.pending()).toEqual([5, 5]);
    expect(await metricValue(metrics, 'workqueue_retries_total', { name: 'test' })).toBe(8);
  });

  it('defaults to client-go limits: 5 ms first, 1000 s cap', () => {
    const { queue } = setup();
    expect(queue.backoffMs(0)).toBe(5);
    expect(queue.backoffMs(10)).toBe(5 * 1024);
    expect(queue.backoffMs(30)).toBe(1_000_000);
  });

  it('shutdown releases waiting workers, drops queued keys and timers, and ignores later adds', async () => {
    const { queue, clock } = setup();
    const waiting = queue.get();
    await settle();
    queue.shutdown();
    expect(await waiting).toBeUndefined();
    queue.add('late');
    queue.addAfter('later', 10);
    queue.addRateLimited('retry');
    expect(queue.length).toBe(0);
    expect(clock.pending()).toEqual([]);
    expect(await queue.get()).toBeUndefined();

    const other = setup();
    other.queue.add('a');
    other.queue.addAfter('b', 10);
    other.queue.shutdown();
    expect(other.queue.length).toBe(0);
    expect(other.clock.pending()).toEqual([]);
  });

  it('drain resolves true when the keys in flight are done, false at the deadline', async () => {
    const { queue, clock } = setup();
    expect(await queue.drain(10)).toBe(true);
    queue.add('a');
    queue.add('b');
    const a = (await queue.get())!;
    const b = (await queue.get())!;
    queue.shutdown();
    let drained: boolean | undefined;
    void queue.drain(1000).then((r) => (drained = r));
    queue.done(a);
    await settle();
    expect(drained).toBeUndefined();
    queue.done(b);
    await settle();
    expect(drained).toBe(true);

    const stuck = setup();
    stuck.queue.add('x');
    await stuck.queue.get();
    let result: boolean | undefined;
    void stuck.queue.drain(500).then((r) => (result = r));
    await stuck.clock.advance(499);
    expect(result).toBeUndefined();
    await stuck.clock.advance(1);
    expect(result).toBe(false);
    void clock;
  });
});

describe('runWorkers', () => {
  it('never reconciles one key in two workers at once, and reconciles after the last add', async () => {
    const { queue, clock } = setup();
    const active = new Map<string, number>();
    let maxPerKey = 0;
    const calls: { key: string; at: number }[] = [];
    const lastAdd = new Map<string, number>();
    const reconcile = async (key: string): Promise<void> => {
      active.set(key, (active.get(key) ?? 0) + 1);
      maxPerKey = Math.max(maxPerKey, active.get(key)!);
      calls.push({ key, at: clock.now() });
      await new Promise<void>((resolveWork) => clock.setTimeout(resolveWork, 7));
      active.set(key, active.get(key)! - 1);
    };
    const workers = runWorkers(queue, 4, reconcile, { logger: silentLogger(), clock });
    // Pseudo-random adds of 3 keys over time, many while the key is being reconciled.
    let seed = 42;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let step = 0; step < 200; step++) {
      const key = `k${Math.floor(random() * 3)}`;
      queue.add(key);
      lastAdd.set(key, clock.now());
      await clock.advance(Math.floor(random() * 4));
    }
    await clock.advance(100);
    expect(maxPerKey).toBe(1);
    for (const [key, at] of lastAdd) {
      // Some reconcile of the key started at or after its last add.
      expect(calls.some((c) => c.key === key && c.at >= at)).toBe(true);
    }
    // Dedup: far fewer reconciles than adds.
    expect(calls.length).toBeLessThan(200);
    queue.shutdown();
    await workers;
  });

  it('success forgets the backoff; requeueAfterMs comes back after that delay; a throw retries with growing backoff', async () => {
    const { queue, clock, metrics } = setup();
    const outcomes: (() => ReconcileResult)[] = [
      () => {
        throw new Error('first');
      },
      () => {
        throw new Error('second');
      },
      () => ({ requeueAfterMs: 1000 }),
      () => undefined,
    ];
    const seen: number[] = [];
    const workers = runWorkers(
      queue,
      2,
      async () => {
        seen.push(clock.now());
        return outcomes.shift()!();
      },
      { logger: silentLogger(), clock, metrics },
    );
    const start = clock.now();
    queue.add('a');
    await clock.advance(0);
    expect(queue.numRequeues('a')).toBe(1);
    await clock.advance(5); // first retry after 5 ms
    expect(queue.numRequeues('a')).toBe(2);
    await clock.advance(10); // second after 10 ms; it asks for 1000 ms
    expect(queue.numRequeues('a')).toBe(0);
    await clock.advance(999);
    expect(seen).toHaveLength(3);
    await clock.advance(1);
    expect(seen.map((t) => t - start)).toEqual([0, 5, 15, 1015]);
    expect(clock.pending()).toEqual([]);
    expect(
      await metricValue(metrics, 'controller_runtime_reconcile_total', { controller: 'test', result: 'error' }),
    ).toBe(2);
    expect(
      await metricValue(metrics, 'controller_runtime_reconcile_total', { controller: 'test', result: 'requeue_after' }),
    ).toBe(1);
    expect(
      await metricValue(metrics, 'controller_runtime_reconcile_total', { controller: 'test', result: 'success' }),
    ).toBe(1);
    expect(await metricValue(metrics, 'controller_runtime_active_workers', { controller: 'test' })).toBe(0);
    queue.shutdown();
    await workers;
  });

  it('resolves once shut down, after the reconcile in flight finishes', async () => {
    const { queue, clock } = setup();
    let finished = false;
    const workers = runWorkers(
      queue,
      2,
      async () => {
        await new Promise<void>((resolveWork) => clock.setTimeout(resolveWork, 100));
        finished = true;
      },
      { logger: silentLogger(), clock },
    );
    let exited = false;
    void workers.then(() => (exited = true));
    queue.add('a');
    await clock.advance(10);
    queue.shutdown();
    await settle();
    expect(exited).toBe(false);
    expect(await Promise.all([queue.drain(1000), clock.advance(100)]).then(([d]) => d)).toBe(true);
    await settle();
    expect(finished).toBe(true);
    expect(exited).toBe(true);
  });
});
