/**
 * The chaos verdict on hand-made recordings: a stage re-run after success is caught whatever the
 * faults; a stage a fault destroyed may start once more and no more; the budget and the leftovers
 * are checked; recovery is the first operator change after the fault.
 */
import { describe, expect, it } from '@jest/globals';
import type { ClusterRecord, NodeSnapshot, StageStart } from '../../../../bench/chaos/cluster-record.js';
import { judge, rebootsOf, type Fault } from '../../../../bench/chaos/verdict.js';
import type { StageJob } from '../../../e2e/skyhook-cluster.js';

const snapshot = (node: string, at: number, over: Partial<NodeSnapshot> = {}): NodeSnapshot => ({
  at,
  node,
  deleted: false,
  unschedulable: false,
  taints: [],
  nodeState: undefined,
  status: undefined,
  bootId: 'b',
  cordonMarks: [],
  ...over,
});

function recordOf(
  starts: (StageStart & { succeeded?: boolean })[],
  options: { history?: NodeSnapshot[]; max?: number } = {},
): ClusterRecord {
  const jobs = new Map<string, StageJob>(
    starts
      .filter((s) => s.kind === 'Job')
      .map((s) => [
        s.uid,
        {
          name: s.uid,
          uid: s.uid,
          node: s.node,
          skyhook: 'chaos',
          package: s.package,
          stage: s.stage,
          failed: false,
          succeeded: s.succeeded ?? true,
          seenAt: s.at,
          doneAt: s.at + 1,
        },
      ]),
  );
  const history = options.history ?? [];
  const latest = new Map(history.map((s) => [s.node, s]));
  return {
    history,
    nodeOps: starts.filter((s) => s.kind === 'NodeOp'),
    jobs: { jobs, stagesByNode: () => ({}), whenSeen: async () => undefined, stop: async () => undefined },
    stageStarts: () => [...starts].sort((a, b) => a.at - b.at),
    latest: () => latest,
    maxDisrupted: () => options.max ?? 1,
    mostDisrupted: () => ({ at: 1, nodes: ['n1(cordoned)', 'n2(in_progress)', 'n3(erroring)'] }),
    stop: async () => undefined,
  };
}

const stage = (
  kind: StageStart['kind'],
  uid: string,
  at: number,
  stageName = 'apply',
  node = 'n1',
  succeeded = true,
) => ({ kind, uid, node, package: 'pkg-1.0.0', stage: stageName, at, succeeded });

describe('judge', () => {
  it('passes a clean run', () => {
    const record = recordOf([
      stage('NodeOp', 'o1', 1),
      stage('Job', 'j1', 2),
      stage('NodeOp', 'o2', 10, 'config'),
      stage('Job', 'j2', 11, 'config'),
    ]);
    expect(judge(record, [], 1).violations).toEqual([]);
  });

  it('catches a Job after a succeeded one, even for a stage a fault destroyed', () => {
    const record = recordOf([stage('NodeOp', 'o1', 1), stage('Job', 'j1', 2), stage('Job', 'j2', 5)]);
    const fault: Fault = {
      kind: 'delete-job',
      node: 'n1',
      at: 3,
      endedAt: 3,
      interrupted: 'n1/pkg-1.0.0/apply',
      restarts: ['Job'],
    };
    const verdict = judge(record, [fault], 1);
    expect(verdict.stagesRunTwice).toEqual(['n1/pkg-1.0.0/apply']);
    expect(verdict.violations).toEqual([
      'completed stages ran again: n1/pkg-1.0.0/apply: NodeOp@+0 Job@+1 ok@+2 Job@+4 ok@+5 delete-job@+2',
    ]);
  });

  it('lets a destroyed stage start once more, and no more', () => {
    const once = recordOf([
      stage('NodeOp', 'o1', 1),
      stage('Job', 'j1', 2, 'apply', 'n1', false),
      stage('Job', 'j2', 5),
    ]);
    const fault: Fault = {
      kind: 'delete-job',
      node: 'n1',
      at: 3,
      endedAt: 3,
      interrupted: 'n1/pkg-1.0.0/apply',
      restarts: ['Job'],
    };
    expect(judge(once, [fault], 1)).toMatchObject({ violations: [], rerunsAfterDeletion: ['n1/pkg-1.0.0/apply'] });
    const twice = recordOf([
      stage('NodeOp', 'o1', 1),
      stage('Job', 'j1', 2, 'apply', 'n1', false),
      stage('Job', 'j2', 5, 'apply', 'n1', false),
      stage('Job', 'j3', 7),
    ]);
    expect(judge(twice, [fault], 1).unexplainedStarts).toEqual(['n1/pkg-1.0.0/apply (1 NodeOps, 3 Jobs)']);
    // Another stage of the same node gets no such allowance.
    const other = recordOf([
      stage('NodeOp', 'o1', 1),
      stage('NodeOp', 'o2', 2, 'config'),
      stage('NodeOp', 'o3', 3, 'config'),
    ]);
    expect(judge(other, [fault], 1).unexplainedStarts).toEqual(['n1/pkg-1.0.0/config (2 NodeOps, 0 Jobs)']);
  });

  it('reports the budget exceeded and what was left on the nodes', () => {
    const history = [
      snapshot('n1', 1, {
        unschedulable: true,
        cordonMarks: ['skyhook.nvidia.com/cordon_chaos'],
        taints: ['node.kubernetes.io/unschedulable:NoSchedule'],
      }),
      snapshot('n2', 2),
    ];
    const verdict = judge(recordOf([], { history, max: 3 }), [], 2);
    expect(verdict.violations).toEqual([
      '3 nodes disrupted at once, budget 2: n1(cordoned) n2(in_progress) n3(erroring)',
      'left behind: n1: cordoned, n1: skyhook.nvidia.com/cordon_chaos',
    ]);
    // The controller-manager's mirror of a cordon, on a node no longer cordoned, is reported apart.
    const mirrored = judge(
      recordOf([], { history: [snapshot('n2', 1, { taints: ['node.kubernetes.io/unschedulable:NoSchedule'] })] }),
      [],
      2,
    );
    expect(mirrored).toMatchObject({ violations: [], mirroredTaintLeft: ['n2'] });
  });

  it('measures recovery to the first operator change after the fault, on the fault’s node when it has one', () => {
    const history = [
      snapshot('n1', 1, { status: 'in_progress' }),
      snapshot('n2', 2, { status: 'in_progress' }),
      snapshot('n2', 12, { bootId: 'c', status: 'in_progress' }),
      snapshot('n2', 15, { status: 'complete' }),
      snapshot('n1', 30, { status: 'complete' }),
    ];
    const record = recordOf([stage('NodeOp', 'o1', 20, 'config', 'n3')], { history });
    const verdict = judge(
      record,
      [
        { kind: 'operator-kill', at: 9, endedAt: 10 },
        { kind: 'uncordon', node: 'n1', at: 9, endedAt: 10 },
      ],
      3,
    );
    expect(verdict.recoveryMs).toMatchObject({ count: 2, p50: 5, max: 20 });
    expect(judge(recordOf([], { history }), [{ kind: 'operator-kill', at: 40, endedAt: 40 }], 3).violations).toEqual([
      'no operator action after the operator-kill fault',
    ]);
  });

  it('counts reboots from the bootIDs the API server showed, not from interrupt records', () => {
    // n1 rebooted once (its reboot pod deleted and recreated after the reboot shows no new bootID);
    // n2 twice; n3 never; n4 was deleted (no bootID in its last snapshot) after one reboot.
    const history = [
      snapshot('n1', 1, { bootId: 'a1' }),
      snapshot('n2', 1, { bootId: 'b1' }),
      snapshot('n3', 1, { bootId: 'c1' }),
      snapshot('n4', 1, { bootId: 'd1' }),
      snapshot('n1', 5, { bootId: 'a2' }),
      snapshot('n1', 6, { bootId: 'a2', status: 'complete' }),
      snapshot('n2', 7, { bootId: 'b2' }),
      snapshot('n4', 7, { bootId: 'd2' }),
      snapshot('n4', 8, { bootId: undefined, deleted: true }),
      snapshot('n2', 9, { bootId: 'b3' }),
    ];
    expect(rebootsOf(recordOf([], { history }), ['n1', 'n2', 'n3', 'n4', 'n5'])).toEqual([1, 2, 0, 1, 0]);
  });
});
