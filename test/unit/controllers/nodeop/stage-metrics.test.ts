/** The stage duration histogram: one observation per node and finished stage, none for standalone NodeOps. */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import type { NodeOp, NodeOpNodeStatus } from '../../../../src/api/nodeop.js';
import { STAGE_DURATION_METRIC, StageMetrics } from '../../../../src/controllers/nodeop/stage-metrics.js';

const stageOp = {
  metadata: { name: 'demo-motd-apply' },
  spec: {
    image: 'x',
    skyhookStage: { skyhook: 'demo', package: { name: 'motd', version: '1.1.0', image: 'x' }, stage: 'apply' },
  },
} as unknown as NodeOp;
const standalone = { metadata: { name: 'prune' }, spec: { image: 'x' } } as unknown as NodeOp;

const running: NodeOpNodeStatus = { phase: 'Running', startedAt: '2026-01-01T00:00:00Z' };
const completed: NodeOpNodeStatus = { ...running, phase: 'Completed', rebootStatus: 'not-requested' };
const rebootPending: NodeOpNodeStatus = { ...running, phase: 'Completed', rebootStatus: 'pending' };
const failed: NodeOpNodeStatus = { ...running, phase: 'Failed' };
const at = (seconds: number): number => Date.parse('2026-01-01T00:00:00Z') + seconds * 1000;

async function counts(registry: Registry): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === STAGE_DURATION_METRIC);
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) {
    if ((v as { metricName?: string }).metricName === `${STAGE_DURATION_METRIC}_sum`)
      out[`${v.labels['result']}_sum`] = v.value;
    if ((v as { metricName?: string }).metricName === `${STAGE_DURATION_METRIC}_count`)
      out[String(v.labels['result'])] = v.value;
  }
  return out;
}

describe('StageMetrics', () => {
  it('observes a node once, when it turns done or failed, from startedAt', async () => {
    const registry = new Registry();
    const metrics = new StageMetrics(registry);
    metrics.observe(stageOp, { a: running, b: running }, { a: rebootPending, b: failed }, at(30));
    metrics.observe(stageOp, { a: rebootPending, b: failed }, { a: completed, b: failed }, at(90));
    metrics.observe(stageOp, { a: completed, b: failed }, { a: completed, b: failed }, at(120));
    expect(await counts(registry)).toEqual({ succeeded: 1, succeeded_sum: 90, failed: 1, failed_sum: 30 });
  });

  it('leaves standalone NodeOps out', async () => {
    const registry = new Registry();
    new StageMetrics(registry).observe(standalone, { a: running }, { a: completed }, at(5));
    expect(await counts(registry)).toEqual({});
  });
});
