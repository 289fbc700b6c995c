/**
 * Every labelled series upstream exports for a Skyhook exists from its first report, 0 when empty:
 * a node status no node is in, a package state or stage no node is at, a package no node has
 * state for yet.
 */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import type { Skyhook } from '../../../../src/api/skyhook.js';
import { SkyhookMetrics } from '../../../../src/controllers/skyhook/skyhook-metrics.js';

const scr = {
  apiVersion: 'skyhook.nvidia.com/v1alpha1',
  kind: 'Skyhook',
  metadata: { name: 'demo' },
  spec: { packages: { tuning: { version: '1.0.0', image: 'x/tuning' } } },
} as unknown as Skyhook;

const NODE_STATUSES = ['unknown', 'complete', 'blocked', 'waiting', 'disabled', 'paused', 'in_progress', 'erroring'];
const STATES = ['complete', 'in_progress', 'skipped', 'erroring', 'unknown'];
const STAGES = ['apply', 'interrupt', 'post-interrupt', 'config', 'uninstall', 'uninstall-interrupt', 'upgrade'];

async function series(registry: Registry, name: string, label: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return Object.fromEntries((metric?.values ?? []).map((v) => [String(v.labels[label]), v.value]));
}

describe('SkyhookMetrics zero series', () => {
  it('exports every node status, package state and package stage from the first report, before any node has state', async () => {
    const registry = new Registry();
    new SkyhookMetrics(registry).report(scr, {});
    expect(await series(registry, 'skyhook_node_status_count', 'status')).toEqual(
      Object.fromEntries(NODE_STATUSES.map((s) => [s, 0])),
    );
    expect(await series(registry, 'skyhook_package_state_count', 'state')).toEqual(
      Object.fromEntries(STATES.map((s) => [s, 0])),
    );
    expect(await series(registry, 'skyhook_package_stage_count', 'stage')).toEqual(
      Object.fromEntries(STAGES.map((s) => [s, 0])),
    );
    expect(await series(registry, 'skyhook_package_restarts_count', 'package_name')).toEqual({ tuning: 0 });
    expect(await series(registry, 'skyhook_node_target_count', 'skyhook_name')).toEqual({ demo: 0 });
    expect(Object.keys(await series(registry, 'skyhook_status', 'status')).sort()).toEqual([...NODE_STATUSES].sort());
  });

  it('counts the nodes in their status, state and stage and keeps the others at 0', async () => {
    const registry = new Registry();
    new SkyhookMetrics(registry).report(scr, {
      nodeStatus: { a: 'complete', b: 'in_progress' },
      nodeState: {
        a: {
          'tuning|1.0.0': { name: 'tuning', version: '1.0.0', image: 'x/tuning', stage: 'config', state: 'complete' },
        },
        b: {
          'tuning|1.0.0': { name: 'tuning', version: '1.0.0', image: 'x/tuning', stage: 'apply', state: 'in_progress' },
        },
      },
    });
    const statuses = await series(registry, 'skyhook_node_status_count', 'status');
    expect(statuses).toMatchObject({ complete: 1, in_progress: 1, blocked: 0, erroring: 0 });
    expect(await series(registry, 'skyhook_package_state_count', 'state')).toMatchObject({
      complete: 1,
      in_progress: 1,
      erroring: 0,
      skipped: 0,
    });
    expect(await series(registry, 'skyhook_package_stage_count', 'stage')).toMatchObject({
      apply: 1,
      config: 1,
      interrupt: 0,
      upgrade: 0,
    });
  });
});
