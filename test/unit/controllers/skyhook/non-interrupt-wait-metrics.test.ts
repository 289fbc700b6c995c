/**
 * The non-interruptible wait metrics: each held node's current wait, computed at scrape time from the
 * persisted start (so it grows with no reconcile), and a histogram of the waits that ended.
 */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { NonInterruptWaitMetrics } from '../../../../src/controllers/skyhook/non-interrupt-wait-metrics.js';

describe('NonInterruptWaitMetrics', () => {
  it('shows each held node’s wait growing at scrape time, and observes a wait once it ends', async () => {
    const registry = new Registry();
    let now = 100_000;
    const metrics = new NonInterruptWaitMetrics(registry, () => now);
    metrics.report(
      'demo',
      new Map([
        ['a', 40_000],
        ['b', 90_000],
      ]),
      now,
    );
    const text = await registry.metrics();
    expect(text).toContain('skyhook_node_non_interrupt_wait_seconds{skyhook_name="demo",node="a"} 60');
    expect(text).toContain('skyhook_node_non_interrupt_wait_seconds{skyhook_name="demo",node="b"} 10');
    now = 130_000;
    expect(await registry.metrics()).toContain(
      'skyhook_node_non_interrupt_wait_seconds{skyhook_name="demo",node="a"} 90',
    );

    // b's pods went: its wait of 40 s ends; a still waits.
    metrics.report('demo', new Map([['a', 40_000]]), now);
    const after = await registry.metrics();
    expect(after).not.toContain('node="b"');
    expect(after).toContain('skyhook_non_interrupt_wait_duration_seconds_count{skyhook_name="demo"} 1');
    expect(after).toContain('skyhook_non_interrupt_wait_duration_seconds_sum{skyhook_name="demo"} 40');

    // A deleted SCR's waits are dropped, not observed.
    metrics.forget('demo');
    const gone = await registry.metrics();
    expect(gone).not.toContain('skyhook_node_non_interrupt_wait_seconds{');
    expect(gone).toContain('skyhook_non_interrupt_wait_duration_seconds_count{skyhook_name="demo"} 1');
  });
});
