import { describe, expect, it } from '@jest/globals';
import type { SkyhookStatus } from '../../../../src/api/skyhook.js';
import {
  hasDecisiveChange,
  progressIntervalMs,
  StatusWritePacing,
  statusNodeCount,
} from '../../../../src/controllers/skyhook/status-write-pacing.js';

const progress: SkyhookStatus = {
  status: 'in_progress',
  nodesInProgress: 2,
  completeNodes: '1/4',
  nodeStatus: { a: 'complete', b: 'in_progress' },
  packageList: 'p:1.0.0',
};

describe('SCR status write pacing', () => {
  it('writes the first status of an SCR at once, then batches progress-only changes', () => {
    const pacing = new StatusWritePacing(2_000);
    expect(pacing.decide('s', undefined, progress, 0)).toEqual({ write: true });
    pacing.written('s', 0);
    const later = {
      ...progress,
      completeNodes: '2/4',
      nodeStatus: { a: 'complete', b: 'complete' },
    } satisfies SkyhookStatus;
    expect(pacing.decide('s', progress, later, 500)).toEqual({ write: false, retryInMs: 1_500 });
    expect(pacing.decide('s', progress, later, 2_000)).toEqual({ write: true });
    // Another SCR has its own clock.
    expect(pacing.decide('t', progress, later, 500)).toEqual({ write: true });
  });

  it('waits longer for the progress of a larger SCR, 3 s per 1000 nodes, at most 30 s', () => {
    expect(progressIntervalMs(3_000, 0)).toBe(3_000);
    expect(progressIntervalMs(3_000, 1_000)).toBe(3_000);
    expect(progressIntervalMs(3_000, 5_000)).toBe(15_000);
    expect(progressIntervalMs(3_000, 50_000)).toBe(30_000);
    const nodes = (n: number): Record<string, 'in_progress'> =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`node-${i}`, 'in_progress' as const]));
    const large: SkyhookStatus = { ...progress, nodeStatus: nodes(5_000) };
    expect(statusNodeCount(large)).toBe(5_000);
    const pacing = new StatusWritePacing(3_000);
    pacing.written('s', 0);
    const later = { ...large, completeNodes: '2/5000' };
    expect(pacing.decide('s', large, later, 3_000)).toEqual({ write: false, retryInMs: 12_000 });
    expect(pacing.decide('s', large, later, 15_000)).toEqual({ write: true });
    // A decisive change does not wait, whatever the size.
    expect(pacing.decide('s', large, { ...later, status: 'complete' }, 1)).toEqual({ write: true });
  });

  it.each<[string, SkyhookStatus]>([
    ['the status value', { ...progress, status: 'complete' }],
    ['config updates', { ...progress, configUpdates: { p: ['a.sh'] } }],
    ['the package list', { ...progress, packageList: 'p:1.0.1' }],
    ['observedGeneration', { ...progress, observedGeneration: 3 }],
    [
      'a condition turning true',
      {
        ...progress,
        conditions: [
          {
            type: 'skyhook.nvidia.com/Erroring',
            status: 'True',
            reason: 'Erroring',
            message: 'x',
            lastTransitionTime: 't',
          },
        ],
      },
    ],
    [
      'batch state',
      {
        ...progress,
        compartmentStatuses: {
          c: {
            matched: 2,
            ceiling: 1,
            inProgress: 1,
            completed: 0,
            progressPercent: 0,
            batchState: { currentBatch: 2 },
          },
        },
      },
    ],
  ])('writes a change of %s at once', (_, next) => {
    expect(hasDecisiveChange(progress, next)).toBe(true);
    const pacing = new StatusWritePacing(2_000);
    pacing.written('s', 0);
    expect(pacing.decide('s', progress, next, 10)).toEqual({ write: true });
  });

  it('treats counts, node maps, priorities and condition messages as progress', () => {
    const withCondition = (message: string): SkyhookStatus => ({
      ...progress,
      conditions: [
        {
          type: 'skyhook.nvidia.com/ApplyPackage',
          status: 'True',
          reason: 'ApplyPackage',
          message,
          lastTransitionTime: 't',
        },
      ],
    });
    expect(hasDecisiveChange(withCondition('to node a'), withCondition('to node b'))).toBe(false);
    expect(
      hasDecisiveChange(progress, {
        ...progress,
        nodesInProgress: 3,
        nodePriority: { c: '2026-01-01T00:00:00Z' },
        nodeState: { a: {} },
      }),
    ).toBe(false);
  });
});
