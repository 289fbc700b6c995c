/**
 * How long Skyhook stages take, as a histogram: observed once per node and stage NodeOp, when the
 * status that turns the node Completed (interrupt included) or Failed has been written, from the
 * node's `startedAt` (so a drain and a reboot count). Once: the next pass reads the written,
 * already finished status. Standalone NodeOps have no Skyhook, package or stage to label them with.
 */
import { Histogram, type Registry } from 'prom-client';
import type { NodeOp, NodeOpNodeStatus } from '../../api/nodeop.js';
import { isNodeDone } from './aggregate.js';

export const STAGE_DURATION_METRIC = 'skyhook_stage_duration_seconds';

type StageLabel = 'skyhook_name' | 'package_name' | 'package_version' | 'stage' | 'result';

function resultOf(before: NodeOpNodeStatus | undefined, after: NodeOpNodeStatus): 'succeeded' | 'failed' | undefined {
  if (isNodeDone(after) && !isNodeDone(before)) return 'succeeded';
  if (after.phase === 'Failed' && before?.phase !== 'Failed') return 'failed';
  return undefined;
}

export class StageMetrics {
  private readonly duration: Histogram<StageLabel>;

  constructor(registry: Registry) {
    this.duration = new Histogram({
      name: STAGE_DURATION_METRIC,
      help: "Time from a node's stage start to its success (interrupt included) or failure",
      labelNames: ['skyhook_name', 'package_name', 'package_version', 'stage', 'result'],
      buckets: [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200],
      registers: [registry],
    });
  }

  /** `before`/`after`: the node statuses read and written by one reconcile; `nowMs` when it wrote them. */
  observe(
    nodeOp: NodeOp,
    before: Record<string, NodeOpNodeStatus>,
    after: Record<string, NodeOpNodeStatus>,
    nowMs: number,
  ): void {
    const stage = nodeOp.spec.skyhookStage;
    if (stage === undefined) return;
    for (const [node, status] of Object.entries(after)) {
      const result = resultOf(before[node], status);
      if (result === undefined || status.startedAt === undefined) continue;
      const seconds = Math.max(0, (nowMs - Date.parse(status.startedAt)) / 1000);
      this.duration.observe(
        {
          skyhook_name: stage.skyhook,
          package_name: stage.package.name,
          package_version: stage.package.version,
          stage: stage.stage,
          result,
        },
        seconds,
      );
    }
  }
}
