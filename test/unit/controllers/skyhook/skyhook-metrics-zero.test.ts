/**
 * Every labelled series upstream exports for a Skyhook exists from its first report, 0 when empty:
 * a node status no node is in, a package state or stage no node is at, a package no node has
 * state for yet, a rollout compartment the planner has not written a status for yet.
 */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import type { DeploymentPolicy } from '../../../../src/api/deployment-policy.js';
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

const ROLLOUT = [
  'skyhook_rollout_matched_nodes',
  'skyhook_rollout_ceiling',
  'skyhook_rollout_in_progress',
  'skyhook_rollout_completed',
  'skyhook_rollout_progress_percent',
  'skyhook_rollout_current_batch',
  'skyhook_rollout_consecutive_failures',
  'skyhook_rollout_should_stop',
];

/** Every labelled series of the registry as `name{label="value",…} value`, labels in their order. */
async function allSeries(registry: Registry): Promise<string[]> {
  return (await registry.getMetricsAsJSON()).flatMap((metric) =>
    metric.values.map(
      (v) =>
        `${metric.name}{${Object.entries(v.labels)
          .map(([k, x]) => `${k}="${x}"`)
          .join(',')}} ${v.value}`,
    ),
  );
}

describe('SkyhookMetrics zero series', () => {
  it('lists every series of a freshly created Skyhook, each 0 (the rollout at batch 1)', async () => {
    const registry = new Registry();
    new SkyhookMetrics(registry).report(scr, {});
    const status = NODE_STATUSES.map((s) => `skyhook_status{skyhook_name="demo",status="${s}"} 0`);
    const nodes = NODE_STATUSES.map((s) => `skyhook_node_status_count{skyhook_name="demo",status="${s}"} 0`);
    const pkg = 'skyhook_name="demo",package_name="tuning",package_version="1.0.0"';
    const states = STATES.map((s) => `skyhook_package_state_count{${pkg},state="${s}"} 0`);
    const stages = STAGES.map((s) => `skyhook_package_stage_count{${pkg},stage="${s}"} 0`);
    const rolloutLabels = 'skyhook_name="demo",policy_name="legacy",compartment_name="__default__",strategy="fixed"';
    const rollout = ROLLOUT.map(
      (name) => `${name}{${rolloutLabels}} ${name === 'skyhook_rollout_current_batch' ? 1 : 0}`,
    );
    expect((await allSeries(registry)).sort()).toEqual(
      [
        ...status,
        ...nodes,
        'skyhook_node_target_count{skyhook_name="demo"} 0',
        ...states,
        ...stages,
        `skyhook_package_restarts_count{${pkg}} 0`,
        ...rollout,
      ].sort(),
    );
  });

  it("reports each of a DeploymentPolicy's compartments and its default at 0 before the planner's first status", async () => {
    const registry = new Registry();
    const policy = {
      metadata: { name: 'tiers' },
      spec: {
        default: { budget: { percent: 50 }, strategy: { linear: { initialBatch: 1, delta: 1 } } },
        compartments: [
          { name: 'critical', selector: {}, budget: { count: 1 }, strategy: { fixed: { initialBatch: 1 } } },
        ],
      },
    } as unknown as DeploymentPolicy;
    const withPolicy = { ...scr, spec: { ...scr.spec, deploymentPolicy: 'tiers' } } as Skyhook;
    new SkyhookMetrics(registry).report(withPolicy, {}, policy);
    const ceilings = (await allSeries(registry)).filter((line) => line.startsWith('skyhook_rollout_ceiling{'));
    expect(ceilings.sort()).toEqual([
      'skyhook_rollout_ceiling{skyhook_name="demo",policy_name="tiers",compartment_name="__default__",strategy="linear"} 0',
      'skyhook_rollout_ceiling{skyhook_name="demo",policy_name="tiers",compartment_name="critical",strategy="fixed"} 0',
    ]);
  });

  it("reports the planner's compartment figures once it has written them, not the zeros", async () => {
    const registry = new Registry();
    new SkyhookMetrics(registry).report(scr, {
      compartmentStatuses: {
        __default__: { matched: 4, ceiling: 2, inProgress: 1, completed: 3, progressPercent: 75 },
      },
    });
    const rollout = (await allSeries(registry)).filter((line) => line.startsWith('skyhook_rollout_'));
    expect(rollout).toContain(
      'skyhook_rollout_completed{skyhook_name="demo",policy_name="legacy",compartment_name="__default__",strategy="fixed"} 3',
    );
    expect(rollout).toHaveLength(ROLLOUT.length);
  });

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
