/**
 * The wait gauges: nodes held per reason, and since when the longest-held of them waits, kept
 * across reports while a node's reason stays and restarted when it changes. And where the package
 * gauges count from when the status lists fewer nodes than the plan has.
 */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import type { Skyhook } from '../../../../src/api/skyhook.js';
import { SkyhookMetrics } from '../../../../src/controllers/skyhook/skyhook-metrics.js';

const scr = {
  apiVersion: 'skyhook.nvidia.com/v1alpha1',
  kind: 'Skyhook',
  metadata: { name: 'demo' },
  spec: { packages: {} },
} as unknown as Skyhook;

async function values(registry: Registry, name: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return Object.fromEntries((metric?.values ?? []).map((v) => [String(v.labels['reason']), v.value]));
}

describe('SkyhookMetrics waits', () => {
  it('counts held nodes per reason and keeps the earliest start while the reason stays', async () => {
    const registry = new Registry();
    const metrics = new SkyhookMetrics(registry);
    metrics.report(
      scr,
      {},
      undefined,
      new Map([
        ['a', 'DrainBlocked'],
        ['b', 'RolloutBudget'],
      ]),
      10_000,
    );
    metrics.report(
      scr,
      {},
      undefined,
      new Map([
        ['a', 'DrainBlocked'],
        ['b', 'TaintNotTolerable'],
        ['c', 'DrainBlocked'],
      ]),
      70_000,
    );
    expect(await values(registry, 'skyhook_node_waiting_count')).toEqual({ DrainBlocked: 2, TaintNotTolerable: 1 });
    // a has waited on the drain since 10 s; b's new reason starts at 70 s.
    expect(await values(registry, 'skyhook_node_waiting_since_timestamp_seconds')).toEqual({
      DrainBlocked: 10,
      TaintNotTolerable: 70,
    });
  });

  it("restarts a node's wait when it stopped waiting in between, and forgets a deleted Skyhook", async () => {
    const registry = new Registry();
    const metrics = new SkyhookMetrics(registry);
    metrics.report(scr, {}, undefined, new Map([['a', 'DrainBlocked']]), 1_000);
    metrics.report(scr, {}, undefined, new Map(), 2_000);
    expect(await values(registry, 'skyhook_node_waiting_count')).toEqual({});
    metrics.report(scr, {}, undefined, new Map([['a', 'DrainBlocked']]), 3_000);
    expect(await values(registry, 'skyhook_node_waiting_since_timestamp_seconds')).toEqual({ DrainBlocked: 3 });
    metrics.forget('demo');
    expect(await values(registry, 'skyhook_node_waiting_since_timestamp_seconds')).toEqual({});
  });
});

describe('SkyhookMetrics package states', () => {
  it('counts every node the plan gives, also those a trimmed status leaves out (status-size.ts)', async () => {
    const registry = new Registry();
    const metrics = new SkyhookMetrics(registry);
    const state = (s: 'complete' | 'in_progress') => ({
      'pkg|1.0.0': { name: 'pkg', version: '1.0.0', image: 'example/pkg', stage: 'config' as const, state: s },
    });
    const trimmed = {
      nodeStatus: { a: 'complete', b: 'complete', c: 'in_progress' },
      nodeState: { c: state('in_progress') },
    } as const;
    metrics.report(scr, trimmed, undefined, new Map(), 0, {
      a: state('complete'),
      b: state('complete'),
      c: state('in_progress'),
    });
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'skyhook_package_state_count');
    const byState = Object.fromEntries((metric?.values ?? []).map((v) => [String(v.labels['state']), v.value]));
    expect(byState).toEqual({ complete: 2, in_progress: 1, erroring: 0, skipped: 0, unknown: 0 });
  });

  it('sums the node, state, stage and restart series per package, and a new report replaces the last one', async () => {
    const registry = new Registry();
    const metrics = new SkyhookMetrics(registry);
    const entry = (name: string, stage: 'apply' | 'config', state: 'complete' | 'in_progress', restarts = 0) => ({
      [`${name}|1.0.0`]: { name, version: '1.0.0', image: `example/${name}`, stage, state, restarts },
    });
    // The non-zero series (every status, state and stage has one, 0 when no node is in it).
    const all = async (metricName: string) =>
      (await registry.getMetricsAsJSON()).find((m) => m.name === metricName)?.values ?? [];
    const series = async (metricName: string): Promise<string[]> =>
      (await all(metricName))
        .filter((v) => metricName === 'skyhook_package_restarts_count' || v.value !== 0)
        .map((v) => `${Object.values(v.labels).slice(1).join(' ')}=${v.value}`)
        .sort();
    const packages = async (): Promise<string[]> => [
      ...new Set((await all('skyhook_package_state_count')).map((v) => String(v.labels['package_name']))),
    ];
    metrics.report(scr, {
      nodeStatus: { a: 'complete', b: 'in_progress', c: 'in_progress' },
      nodeState: {
        a: { ...entry('x', 'config', 'complete', 1), ...entry('y', 'config', 'complete') },
        b: { ...entry('x', 'config', 'complete', 2), ...entry('y', 'apply', 'in_progress') },
        c: entry('x', 'apply', 'in_progress'),
      },
    });
    expect(await series('skyhook_node_status_count')).toEqual(['complete=1', 'in_progress=2']);
    expect(await series('skyhook_package_state_count')).toEqual([
      'x 1.0.0 complete=2',
      'x 1.0.0 in_progress=1',
      'y 1.0.0 complete=1',
      'y 1.0.0 in_progress=1',
    ]);
    expect(await series('skyhook_package_stage_count')).toEqual([
      'x 1.0.0 apply=1',
      'x 1.0.0 config=2',
      'y 1.0.0 apply=1',
      'y 1.0.0 config=1',
    ]);
    expect(await series('skyhook_package_restarts_count')).toEqual(['x 1.0.0=3', 'y 1.0.0=0']);
    // The next report: every node complete; states and stages no node has any more are 0, and the
    // package no node has state of any more (and the spec does not name) is gone.
    metrics.report(scr, {
      nodeStatus: { a: 'complete', b: 'complete', c: 'complete' },
      nodeState: {
        a: entry('x', 'config', 'complete'),
        b: entry('x', 'config', 'complete'),
        c: entry('x', 'config', 'complete'),
      },
    });
    expect(await series('skyhook_node_status_count')).toEqual(['complete=3']);
    expect(await series('skyhook_package_state_count')).toEqual(['x 1.0.0 complete=3']);
    expect(await series('skyhook_package_stage_count')).toEqual(['x 1.0.0 config=3']);
    expect(await series('skyhook_package_restarts_count')).toEqual(['x 1.0.0=0']);
    expect(await packages()).toEqual(['x']);
  });
});
