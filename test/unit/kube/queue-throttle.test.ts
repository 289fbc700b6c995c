/**
 * 429 from the API server (priority and fairness): the work queue backs off as the server asks
 * (Retry-After), for the whole controller, visibly (a warning naming the controller and the delay,
 * and skyhook_api_throttled_total{controller}); and a reconcile that finds nothing to do drops an
 * earlier requeue timer when the controller asks for that. Driven by a fake clock.
 */
import { describe, expect, it } from '@jest/globals';
import pino from 'pino';
import { retryAfterMs } from '../../../src/kube/errors.js';
import { RuntimeMetrics } from '../../../src/kube/metrics.js';
import { runWorkers, WorkQueue, type ReconcileResult } from '../../../src/kube/queue.js';
import { silentLogger } from '../../../src/kube/logger.js';
import { FakeClock, settle } from './fake-clock.js';

/** An ApiException as client-node 1.x/2.x throws it: code, the Status JSON as body, and the headers. */
const throttled = (headers: Record<string, string> = { 'retry-after': '2' }) =>
  Object.assign(new Error('HTTP-Code: 429'), {
    code: 429,
    body: JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'too many requests' }),
    headers,
  });

async function metricValue(metrics: RuntimeMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const sample = (metric?.values ?? []).find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return sample?.value ?? 0;
}

/** A logger whose lines land in `lines` as objects. */
function capturingLogger(lines: Record<string, unknown>[]) {
  return pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
}

describe('retryAfterMs', () => {
  it('reads Retry-After in seconds or as an HTTP date, in any case; else details.retryAfterSeconds; else nothing', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(throttled({ 'Retry-After': '3' }), now)).toBe(3000);
    expect(retryAfterMs(throttled({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5000);
    const fromStatus = Object.assign(new Error('429'), {
      code: 429,
      body: JSON.stringify({ kind: 'Status', code: 429, details: { retryAfterSeconds: 4 } }),
    });
    expect(retryAfterMs(fromStatus, now)).toBe(4000);
    expect(retryAfterMs(throttled({}), now)).toBeUndefined();
    expect(retryAfterMs(new Error('network'), now)).toBeUndefined();
  });
});

describe('a 429 throttles the whole queue', () => {
  it('retries the key after Retry-After, hands out no other key meanwhile, warns and counts it per controller', async () => {
    const clock = new FakeClock();
    const metrics = new RuntimeMetrics();
    const queue = new WorkQueue({ name: 'nodeop', clock, metrics });
    const lines: Record<string, unknown>[] = [];
    const seen: [string, number][] = [];
    let refuse = true;
    const start = clock.now();
    const workers = runWorkers(
      queue,
      4,
      async (key) => {
        seen.push([key, clock.now() - start]);
        if (key === 'a' && refuse) {
          refuse = false;
          throw throttled({ 'retry-after': '2' });
        }
      },
      { logger: capturingLogger(lines), clock, metrics },
    );
    queue.add('a');
    await clock.advance(0);
    expect(queue.paused).toBe(true);
    // Keys added while the server asked us to wait stay queued, however many workers are idle.
    queue.add('b');
    await clock.advance(1999);
    expect(seen).toEqual([['a', 0]]);
    expect(queue.length).toBe(1);
    await clock.advance(1);
    expect(seen).toEqual([
      ['a', 0],
      ['b', 2000],
      ['a', 2000],
    ]);
    expect(queue.paused).toBe(false);
    expect(await metricValue(metrics, 'skyhook_api_throttled_total', { controller: 'nodeop' })).toBe(1);
    const warning = lines.find((l) => l['level'] === 40);
    expect(warning).toMatchObject({ controller: 'nodeop', key: 'a', delayMs: 2000 });
    expect(String(warning?.['msg'])).toContain('429');
    queue.shutdown();
    await workers;
  });

  it('waits 1 s when the server names no delay, never more than 60 s, and grows the backoff if 429s go on', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ name: 'q', clock, baseDelayMs: 1000 });
    const at: number[] = [];
    const start = clock.now();
    const answers = [throttled({}), throttled({ 'retry-after': '3600' }), throttled({}), throttled({})];
    const workers = runWorkers(
      queue,
      1,
      async () => {
        at.push(clock.now() - start);
        const answer = answers.shift();
        if (answer) throw answer;
      },
      { logger: silentLogger(), clock },
    );
    queue.add('a');
    await clock.advance(0);
    await clock.advance(1000); // 1 s default
    await clock.advance(60_000); // capped at 60 s
    await clock.advance(4000); // third failure: the key's own backoff (1 s · 2²) exceeds the 1 s asked
    await clock.advance(8000);
    expect(at).toEqual([0, 1000, 61_000, 65_000, 73_000]);
    expect(queue.numRequeues('a')).toBe(0);
    queue.shutdown();
    await workers;
  });

  it('shutdown during a pause releases the waiting workers', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ name: 'q', clock });
    const workers = runWorkers(
      queue,
      2,
      async () => {
        throw throttled();
      },
      { logger: silentLogger(), clock },
    );
    queue.add('a');
    await clock.advance(0);
    queue.shutdown();
    await workers;
    expect(clock.pending()).toEqual([]);
  });
});

describe('successCancelsRequeue', () => {
  const run = async (successCancelsRequeue: boolean): Promise<number> => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ name: 'q', clock });
    const outcomes: ReconcileResult[] = [{ requeueAfterMs: 60_000, reason: 'safety net' }, undefined];
    let reconciles = 0;
    const workers = runWorkers(
      queue,
      1,
      async () => {
        reconciles++;
        return outcomes.shift();
      },
      { logger: silentLogger(), clock, successCancelsRequeue },
    );
    queue.add('a');
    await clock.advance(0);
    queue.add('a'); // an event: this reconcile finds the work done
    await clock.advance(120_000);
    await settle();
    queue.shutdown();
    await workers;
    return reconciles;
  };

  it("drops the earlier reconcile's safety recheck once a later one finds nothing to look at", async () => {
    expect(await run(true)).toBe(2);
  });

  it('keeps it otherwise (client-go: timers stay)', async () => {
    expect(await run(false)).toBe(3);
  });
});
