/**
 * How the writer cuts one SCR's planned actions into steps: one step per bucket of action-order.ts,
 * in the buckets' order (the crash-safety and budget order), even where two buckets hold the same
 * kinds; one patch per node for the node writes that follow each other; one chain per node, op or
 * ConfigMap inside a step; and actions no bucket claims (steps of their own) applied alone.
 */
import { describe, expect, it } from '@jest/globals';
import { nodeAnnotations, nodeLabels } from '../../../../../src/api/names.js';
import { orderSteps, type ActionBuckets } from '../../../../../src/controllers/skyhook/plan/action-order.js';
import type {
  CordonNode,
  PlannerAction,
  SetNodeAnnotations,
  WriteNodeState,
} from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { type ApplyUnit, applySteps, chains } from '../../../../../src/controllers/skyhook/write/apply-steps.js';
import { applyActions, finishOps, node, plan, scr, world } from '../plan/world.js';
import { emptyBuckets, nodeStatus } from './action-fixtures.js';

const empty = emptyBuckets;

const state = (node: string, annotation = 'x'): WriteNodeState => ({
  kind: 'writeNodeState',
  skyhook: 's',
  node,
  state: {},
  annotation,
});
const status = nodeStatus;
const annotate = (node: string, key: string): SetNodeAnnotations => ({
  kind: 'setNodeAnnotations',
  node,
  annotations: { [key]: 'v' },
});
const cordon = (node: string): CordonNode => ({
  kind: 'cordonNode',
  node,
  claim: 'skyhook.nvidia.com/cordon_s',
  reason: 'r',
});

/** The creation of a stage's NodeOp on `node` (package `p` unless named). */
const stageOp = (node: string, stage: 'apply' | 'config', pkg = 'p'): ActionBuckets['creates'][number] =>
  ({
    kind: 'createStageOp',
    skyhook: 's',
    node,
    package: { name: pkg, version: '1', image: 'i' },
    stage,
    previousRestarts: 0,
  }) as ActionBuckets['creates'][number];

/** What a unit touches, for readable expectations. */
function label(unit: ApplyUnit): string {
  if (unit.kind === 'nodeWrite') return `patch ${unit.write.node}`;
  if (unit.kind === 'nodeMetadata') return `metadata ${unit.write.node}`;
  const { action } = unit;
  return 'node' in action
    ? `${action.kind} ${action.node}`
    : 'name' in action
      ? `${action.kind} ${action.name}`
      : action.kind;
}

const labels = (planned: PlannerAction[][]): string[][] => applySteps(planned).map((step) => step.map(label));

describe('applySteps', () => {
  it('keeps the buckets apart and in order, also where two buckets hold the same kinds (node writes, then slot takers)', () => {
    const planned = orderSteps({
      ...empty(),
      nodeWrites: [status('done-1', 'complete'), status('done-2', 'complete')],
      slotTakers: [status('new-1', 'in_progress'), status('new-2', 'in_progress')],
      deletes: [{ kind: 'deleteStageOp', name: 'op-1', reason: 'r' }],
      creates: [],
    });
    expect(labels(planned)).toEqual([
      ['patch done-1', 'patch done-2'],
      ['patch new-1', 'patch new-2'],
      ['deleteStageOp op-1'],
    ]);
  });

  it('sends the node writes of one node that follow each other as one patch, in the step of its first one', () => {
    const planned = orderSteps({
      ...empty(),
      nodeWrites: [state('n1', 'a'), status('n1', 'in_progress'), state('n2')],
      nodeMetadata: [annotate('n1', 'hold')],
    });
    const steps = applySteps(planned);
    expect(steps.map((step) => step.map(label))).toEqual([['patch n1', 'patch n2']]);
    const n1 = steps[0]![0]!;
    if (n1.kind !== 'nodeWrite') throw new Error('n1 should be a node patch');
    expect(Object.keys(n1.write.annotations)).toEqual(
      expect.arrayContaining(['hold', nodeAnnotations.nodeState('s'), nodeAnnotations.status('s')]),
    );
    expect(n1.write.labels).toEqual({ [nodeLabels.status('s')]: 'in_progress' });
  });

  it("chains one node's writes of a step in order (a cordon, then the node's hold annotation); other nodes run beside them", () => {
    const planned = orderSteps({
      ...empty(),
      nodeMetadata: [cordon('n1'), cordon('n2'), annotate('n1', 'hold')],
    });
    const [step] = applySteps(planned);
    expect(chains(step!).map((chain) => chain.map(label))).toEqual([['cordonNode n1', 'patch n1'], ['cordonNode n2']]);
  });

  it("keeps a node's metadata ConfigMap and NodeOp one unit, and two stages of one node in one chain", () => {
    const create = (node: string, pkg: string) => stageOp(node, 'apply', pkg);
    const planned = orderSteps({
      ...empty(),
      creates: [create('n1', 'a'), create('n2', 'a'), create('n1', 'b')],
    });
    const [step] = applySteps(planned);
    expect(chains(step!).map((chain) => chain.map(label))).toEqual([
      ['createStageOp n1', 'createStageOp n1'],
      ['createStageOp n2'],
    ]);
  });

  it("writes a starting stage's metadata ConfigMap beside the node's state patch, in its own chain; a node with other writes keeps the order", () => {
    const create = (node: string) => stageOp(node, 'config');
    const planned = orderSteps({
      ...empty(),
      // n1: a stage ends and the next starts (its state, then its NodeOp); n2: the same, cordoned
      // first (its ConfigMap must show the cordon); n3: a NodeOp only (its state written earlier).
      nodeWrites: [state('n1'), state('n2')],
      nodeMetadata: [cordon('n2')],
      creates: [create('n1'), create('n2'), create('n3')],
    });
    const steps = applySteps(planned);
    expect(steps.map((step) => chains(step).map((chain) => chain.map(label)))).toEqual([
      [['patch n1'], ['patch n2'], ['metadata n1']],
      [['cordonNode n2']],
      [['createStageOp n1'], ['createStageOp n2'], ['createStageOp n3']],
    ]);
    const preWrite = steps[0]!.find((unit) => unit.kind === 'nodeMetadata');
    const patch = steps[0]!.find((unit) => unit.kind === 'nodeWrite' && unit.write.node === 'n1');
    // The ConfigMap is built from the node as its patch leaves it: the very patch of the step.
    expect(preWrite?.kind === 'nodeMetadata' && patch?.kind === 'nodeWrite' && preWrite.write === patch.write).toBe(
      true,
    );
  });

  it('applies actions no bucket claims (the runtime-required taints) one by one, in order', () => {
    const taint = { key: 'k', value: 'v', effect: 'NoSchedule' as const };
    const ordered = orderSteps({ ...empty(), slotTakers: [status('n1', 'in_progress')] });
    const planned: PlannerAction[][] = [
      [{ kind: 'addNodeTaint', node: 'n1', taint }],
      [{ kind: 'addNodeTaint', node: 'n2', taint }],
      ...ordered,
      [{ kind: 'removeNodeTaint', node: 'n3', taint }],
      [{ ...status('n4', 'complete') }],
    ];
    expect(labels(planned)).toEqual([
      ['addNodeTaint n1'],
      ['addNodeTaint n2'],
      ['patch n1'],
      ['removeNodeTaint n3'],
      ['patch n4'],
    ]);
  });

  it('gives every action of a real plan a bucket or applies it alone (bucket ids never go back)', () => {
    const planned = orderSteps({
      ...empty(),
      failureReports: [{ kind: 'reportFailedStage', name: 'op-0' }],
      configMaps: [{ kind: 'upsertPackageConfigMap', skyhook: 's', package: 'p', version: '1', data: {} }],
      nodeWrites: [status('a', 'complete')],
      cordonReleases: [{ kind: 'releaseNodeCordon', node: 'a', claim: 'c', reason: 'r' }],
      slotTakers: [status('b', 'in_progress')],
      nodeMetadata: [cordon('b')],
      deletes: [{ kind: 'deleteStageOp', name: 'op-0', reason: 'r' }],
      suspends: [{ kind: 'suspendStageOp', name: 'op-1', suspend: true }],
      status: { kind: 'setSkyhookStatus', skyhook: 's', status: {} },
      events: [{ kind: 'event', involved: { kind: 'Skyhook', name: 's' }, type: 'Normal', reason: 'R', message: 'm' }],
    });
    expect(labels(planned)).toEqual([
      ['reportFailedStage op-0'],
      ['upsertPackageConfigMap'],
      ['patch a'],
      ['releaseNodeCordon a'],
      ['patch b'],
      ['cordonNode b'],
      ['deleteStageOp op-0'],
      ['suspendStageOp op-1'],
      ['setSkyhookStatus'],
      ['event'],
    ]);
  });

  it("hands the writer every action of the planner's own SCR passes over a whole rollout, in order, in at most one step per bucket", () => {
    const w = world(
      [
        scr('demo', {
          interruptionBudget: { count: 2 },
          packages: {
            tuning: {
              version: '1.0.0',
              image: 'img',
              configMap: { 'apply.sh': 'echo' },
              interrupt: { type: 'reboot' },
            },
          },
        }),
      ],
      [node('n1', 1), node('n2', 2), node('n3', 3), node('n4', 4)],
    );
    let seen = 0;
    for (let round = 0; round < 40; round++) {
      const { actions, steps } = plan(w);
      if (actions.length === 0) break;
      const flat = steps.flat();
      expect(flat).toHaveLength(actions.length);
      expect(flat.every((action, i) => action === actions[i])).toBe(true);
      expect(steps.every((step) => step.length > 0)).toBe(true);
      // One SCR, no runtime-required taints: every step is one of the 11 buckets, each at most once.
      expect(steps.length).toBeLessThanOrEqual(11);
      seen += actions.length;
      applyActions(w, actions);
      finishOps(w);
      w.now += 1_000;
    }
    expect(seen).toBeGreaterThan(20);
  });
});
