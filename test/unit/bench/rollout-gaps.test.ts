/** The event-driven gaps of the rollout benchmarks, per SCR when several roll out at once. */
import { describe, expect, it } from '@jest/globals';
import {
  hasRevisions,
  jobsBySkyhookNode,
  maxInProgress,
  maxStageJobsRunning,
  nextNodeGaps,
  nextSkyhookGaps,
  nextStageGaps,
} from '../../../bench/rollout-gaps.js';
import { budgetCheck } from '../../../bench/rollout-report.js';
import type { StageJob } from '../../../test/e2e/skyhook-cluster.js';

const job = (skyhook: string, node: string, stage: string, seenAt: number, doneAt?: number): StageJob => ({
  name: `${skyhook}-${node}-${stage}`,
  uid: `${skyhook}-${node}-${stage}`,
  node,
  skyhook,
  package: 'pkg',
  stage,
  failed: false,
  succeeded: doneAt !== undefined,
  seenAt,
  doneAt,
});

describe('rollout gaps', () => {
  const jobs = [
    job('a', 'n1', 'apply', 0, 100),
    job('a', 'n1', 'config', 110, 200),
    job('a', 'n2', 'apply', 0, 100),
    job('a', 'n2', 'config', 130, 250),
    job('a', 'n3', 'apply', 215, 300),
    // SCR b starts on n1 after a is done there: not a same-SCR stage gap.
    job('b', 'n1', 'apply', 260, 350),
    job('b', 'n1', 'config', 370),
  ];
  const grouped = jobsBySkyhookNode(jobs);

  it('groups by SCR and node', () => {
    expect([...grouped.keys()].sort()).toEqual(['a/n1', 'a/n2', 'a/n3', 'b/n1']);
  });

  it('measures the hand-over from one SCR to the next on each node (priority order), leaving out nodes without both', () => {
    // n1: a's config done at 200, b's apply seen at 260; n2 and n3 have no b.
    expect(nextSkyhookGaps(grouped, ['a', 'b'])).toEqual([60]);
    expect(nextSkyhookGaps(grouped, ['b', 'a'])).toEqual([]);
  });

  it('measures the next stage of the same SCR on the same node', () => {
    expect(nextStageGaps(grouped).sort((x, y) => x - y)).toEqual([10, 20, 30]);
  });

  it('measures a freed slot refilled per SCR, leaving out nodes not finished', () => {
    // SCR a, budget 2: n1 finishes at 200, n3 (the third start) at 215; SCR b has no finished node.
    expect(nextNodeGaps(grouped, 2, 2)).toEqual([15]);
  });

  it('counts the most nodes of one SCR in progress at once, a slot freed and taken at once not twice', () => {
    // SCR a: n1 [0, 200], n2 [0, 250], n3 [215, not finished]; SCR b: n1 [260, not finished].
    expect(maxInProgress(grouped, 2)).toBe(2);
    const handOver = jobsBySkyhookNode([job('c', 'x', 'apply', 0, 10), job('c', 'y', 'apply', 10, 20)]);
    expect(maxInProgress(handOver, 1)).toBe(1);
  });

  // Budget 1, one stage. The cluster: x's pod succeeded at revision 20, then the operator created y's
  // Job at 25. The watcher: the Job watch showed y's Job (at 1000 ms) before the lagging pod watch
  // showed x's pod Succeeded (at 1500 ms).
  const revisioned = (node: string, seenAt: number, seenRv: string, doneAt?: number, doneRv?: string): StageJob => ({
    ...job('r', node, 'apply', seenAt, doneAt),
    seenRv,
    doneRv,
  });

  it('counts in the order of resourceVersions when asked, not in the order two lagging watches delivered', () => {
    const lagged = jobsBySkyhookNode([revisioned('x', 0, '10', 1500, '20'), revisioned('y', 1000, '25', 3000, '40')]);
    expect(hasRevisions(lagged)).toBe(true);
    expect(maxInProgress(lagged, 1, 'arrival')).toBe(2);
    expect(maxInProgress(lagged, 1, 'revision')).toBe(1);
    expect(budgetCheck(lagged, 1, 1)).toEqual({
      perSkyhook: 1,
      maxNodesInProgressPerSkyhook: 1,
      orderedBy: 'resourceVersion',
      maxNodesInProgressByArrival: 2,
      maxStageJobsRunningPerSkyhook: 1,
      exceeded: false,
    });
  });

  it('flags a budget the cluster really exceeded', () => {
    // y's Job created (revision 15) before x's pod succeeded (20): two nodes at once, budget 1.
    const overshoot = jobsBySkyhookNode([
      revisioned('x', 0, '10', 1500, '20'),
      revisioned('y', 1000, '15', 3000, '40'),
    ]);
    expect(budgetCheck(overshoot, 1, 1)).toMatchObject({ maxNodesInProgressPerSkyhook: 2, exceeded: true });
    // A record without resourceVersions falls back to the arrival order, and says so.
    expect(budgetCheck(grouped, 2, 1)).toMatchObject({
      orderedBy: 'arrival',
      maxNodesInProgressPerSkyhook: 2,
      exceeded: true,
    });
  });

  it('counts the stage Jobs running at once apart from nodes between two stages', () => {
    // Budget 1, two stages: x's first stage done (20), then y's Job (25) while x waits between its stages.
    const twoStages = jobsBySkyhookNode([
      { ...revisioned('x', 0, '10', 100, '20'), stage: 'apply' },
      { ...revisioned('y', 200, '25', 300, '30'), stage: 'apply' },
      { ...revisioned('y', 400, '35', 500, '40'), stage: 'config', uid: 'y2' },
      { ...revisioned('x', 600, '45', 700, '50'), stage: 'config', uid: 'x2' },
    ]);
    expect(maxInProgress(twoStages, 2, 'revision')).toBe(2);
    expect(maxStageJobsRunning(twoStages, 'revision')).toBe(1);
    // x blocked between its stages gave its slot to y: no stage work beyond the budget, and the report says why.
    const check = budgetCheck(twoStages, 2, 1);
    expect(check).toMatchObject({ exceeded: false, maxNodesInProgressPerSkyhook: 2, maxStageJobsRunningPerSkyhook: 1 });
    expect(check.note).toContain('gave their slots up');
  });
});
