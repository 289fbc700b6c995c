import { describe, expect, it } from '@jest/globals';
import { budgetCeiling } from '../../../../../src/controllers/skyhook/plan/rollout.js';
import type { CreateStageOp, PlannerAction } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import {
  applyActions,
  disable,
  finishOps,
  node,
  nodeNamed,
  nodeStateOf,
  pause,
  pkg,
  plan,
  runToQuiet,
  scr,
  world,
  type World,
} from './world.js';

const SHELLSCRIPT = 'ghcr.io/nvidia/skyhook-packages/shellscript';
const demoPackages = () => ({
  tuning: { version: '1.1.0', image: SHELLSCRIPT, configMap: { 'apply.sh': 'echo hi', 'config.sh': 'echo config' } },
});

const creates = (actions: PlannerAction[]): CreateStageOp[] =>
  actions.filter((a): a is CreateStageOp => a.kind === 'createStageOp');
const statusOf = (w: World, name: string) => w.skyhooks.find((s) => s.metadata.name === name)!.status!;
const nodeStatus = (w: World, nodeName: string, skyhook: string) =>
  nodeNamed(w, nodeName).annotations[`skyhook.nvidia.com/status_${skyhook}`];
const condition = (w: World, skyhook: string, type: string) =>
  statusOf(w, skyhook).conditions?.find((c) => c.type === type);

/** One plan+apply round, then finish every running op. */
function step(w: World): PlannerAction[] {
  const { actions } = plan(w);
  applyActions(w, actions);
  finishOps(w);
  w.now += 1_000;
  return actions;
}

describe('the README demo on 3 labelled nodes and 2 others', () => {
  const setup = () =>
    world(
      [scr('demo', { packages: demoPackages() })],
      [node('n1', 1), node('n2', 2), node('n3', 3), node('other1', 4, {}), node('other2', 5, {})],
    );

  it('runs apply then config per node and converges to upstream state and status', () => {
    const w = setup();
    const first = plan(w).actions;
    const kinds = first.map((a) => a.kind);
    expect(kinds.indexOf('upsertPackageConfigMap')).toBeLessThan(kinds.indexOf('createStageOp'));
    expect(creates(first).map((c) => `${c.node}:${c.stage}:${c.configMap}`)).toEqual([
      'n1:apply:demo-tuning-1.1.0',
      'n2:apply:demo-tuning-1.1.0',
      'n3:apply:demo-tuning-1.1.0',
    ]);
    runToQuiet(w);
    expect(w.created.map((op) => `${op.node}:${op.stage}`).sort()).toEqual([
      'n1:apply',
      'n1:config',
      'n2:apply',
      'n2:config',
      'n3:apply',
      'n3:config',
    ]);
    for (const n of ['n1', 'n2', 'n3']) {
      expect(nodeStateOf(w, n, 'demo')).toBe(
        `{"tuning|1.1.0":{"name":"tuning","version":"1.1.0","image":"${SHELLSCRIPT}","stage":"config","state":"complete"}}`,
      );
      expect(nodeStatus(w, n, 'demo')).toBe('complete');
      expect(nodeNamed(w, n).labels['skyhook.nvidia.com/status_demo']).toBe('complete');
    }
    expect(nodeNamed(w, 'other1').annotations).toEqual({});
    expect(statusOf(w, 'demo')).toMatchObject({
      status: 'complete',
      completeNodes: '3/3',
      nodesInProgress: 0,
      packageList: 'tuning:1.1.0',
      observedGeneration: 1,
    });
    expect(condition(w, 'demo', 'Ready')).toMatchObject({
      status: 'True',
      reason: 'NodesConverged',
      message: '3/3 nodes complete (n1, n2, n3)',
    });
    expect(condition(w, 'demo', 'skyhook.nvidia.com/Transition')).toMatchObject({ status: 'True', reason: 'complete' });
  });

  it('is idle once converged: planning again writes nothing', () => {
    const w = setup();
    runToQuiet(w);
    expect(plan(w).actions.filter((a) => a.kind !== 'event')).toEqual([]);
  });

  it('deletes finished ops once their retention (the Job TTL) has passed, keeping the state complete', () => {
    const w = setup();
    runToQuiet(w);
    expect(w.ops).toHaveLength(6);
    const idle = plan(w);
    expect(idle.requeueAfterMs).toBeGreaterThan(3_500_000);
    w.now += 3_600_000;
    const { actions } = plan(w);
    const deletes = actions.filter((a) => a.kind === 'deleteStageOp');
    expect(deletes).toHaveLength(6);
    expect(deletes[0]).toMatchObject({ reason: 'finished and kept for the retention period' });
    expect(creates(actions)).toEqual([]);
    applyActions(w, actions);
    expect(w.ops).toEqual([]);
    expect(plan(w).actions.filter((a) => a.kind !== 'event')).toEqual([]);
    expect(nodeStatus(w, 'n1', 'demo')).toBe('complete');
  });

  it('keeps a finished op whose outcome is not recorded yet, however old', () => {
    const w = setup();
    step(w);
    w.now += 90_000_000;
    expect(plan(w).actions.filter((a) => a.kind === 'deleteStageOp')).toEqual([]);
  });

  it('reports in-progress counts mid-rollout', () => {
    const w = setup();
    step(w);
    plan(w);
    applyActions(w, plan(w).actions);
    expect(statusOf(w, 'demo')).toMatchObject({ status: 'in_progress', completeNodes: '0/3', nodesInProgress: 3 });
  });
});

describe('interruption budget', () => {
  it.each([
    [{ count: 0 }, 6, 1],
    [{ count: 2 }, 6, 2],
    [{ count: 10 }, 6, 6],
    [{ percent: 50 }, 6, 3],
    [{ percent: 33 }, 6, 1],
    [{ percent: 0 }, 6, 1],
    [{ percent: 50 }, 0, 1],
    [undefined, 6, 6],
    [{ percent: null, count: 3 }, 6, 3],
  ])('%j on %i nodes → %i at once', (budget, n, expected) => {
    expect(budgetCeiling(budget, n)).toBe(expected);
  });

  it.each([
    [{ count: 2 }, 2],
    [{ percent: 50 }, 3],
  ])('%j on 6 nodes never has more nodes at work than allowed, and completes', (interruptionBudget, ceiling) => {
    const nodes = Array.from({ length: 6 }, (_, i) => node(`n${i}`, i));
    const w = world(
      [
        scr('budget', {
          interruptionBudget,
          packages: { a: pkg('1.0.0'), b: pkg('1.0.0', { dependsOn: { a: '1.0.0' } }) },
        }),
      ],
      nodes,
    );
    let most = 0;
    runToQuiet(w, 80, (current) => {
      const atWork = new Set(current.ops.filter((op) => op.phase === 'Running').map((op) => op.node));
      most = Math.max(most, atWork.size, statusOf(current, 'budget').nodesInProgress ?? 0);
    });
    expect(most).toBe(ceiling);
    expect(statusOf(w, 'budget')).toMatchObject({ status: 'complete', completeNodes: '6/6' });
  });
});

describe('priority, pause and disable across SCRs', () => {
  it('a node works on one SCR at a time, by priority then name', () => {
    const w = world(
      [
        scr('zzz', { priority: 1, packages: { a: pkg('1.0.0') } }),
        scr('b', { priority: 2, packages: { a: pkg('1.0.0') } }),
        scr('c', { priority: 2, packages: { a: pkg('1.0.0') } }),
      ],
      [node('n1', 1)],
    );
    const first = creates(step(w));
    expect(first.map((c) => c.skyhook)).toEqual(['zzz']);
    expect(nodeStatus(w, 'n1', 'b')).toBe('waiting');
    step(w);
    const third = creates(step(w));
    expect(third.map((c) => `${c.skyhook}:${c.stage}`)).toEqual(['b:apply']);
    expect(nodeStatus(w, 'n1', 'c')).toBe('waiting');
    runToQuiet(w);
    expect(['zzz', 'b', 'c'].map((name) => statusOf(w, name).status)).toEqual(['complete', 'complete', 'complete']);
  });

  it('pause: no new stages, unfinished ops suspended, and lower-priority SCRs wait; resume lifts the suspension', () => {
    const w = world(
      [
        scr('first', { priority: 1, packages: { a: pkg('1.0.0') } }),
        scr('second', { priority: 2, packages: { a: pkg('1.0.0') } }),
      ],
      [node('n1', 1)],
    );
    applyActions(w, plan(w).actions);
    w.skyhooks[0]!.metadata.annotations = pause;
    const paused = plan(w).actions;
    expect(paused).toContainEqual({ kind: 'suspendStageOp', name: w.ops[0]!.name, suspend: true });
    expect(creates(paused)).toEqual([]);
    applyActions(w, paused);
    finishOps(w);
    applyActions(w, plan(w).actions);
    expect(creates(plan(w).actions)).toEqual([]);
    expect(statusOf(w, 'first').status).toBe('paused');
    expect(nodeStatus(w, 'n1', 'first')).toBe('paused');
    expect(nodeStatus(w, 'n1', 'second')).toBe('waiting');
    w.skyhooks[0]!.metadata.annotations = {};
    runToQuiet(w);
    expect(statusOf(w, 'first').status).toBe('complete');
    expect(statusOf(w, 'second').status).toBe('complete');
  });

  it('disable: the SCR does nothing and does not hold back later SCRs', () => {
    const w = world(
      [
        scr('first', { priority: 1, packages: { a: pkg('1.0.0') } }, disable),
        scr('second', { priority: 2, packages: { a: pkg('1.0.0') } }),
      ],
      [node('n1', 1)],
    );
    runToQuiet(w);
    expect(statusOf(w, 'first').status).toBe('disabled');
    expect(nodeStatus(w, 'n1', 'first')).toBe('disabled');
    expect(statusOf(w, 'second').status).toBe('complete');
    expect(w.created.every((op) => op.skyhook === 'second')).toBe(true);
  });

  it('sequencing: all holds later SCRs on every node until the earlier one completes everywhere', () => {
    const w = world(
      [
        scr('first', {
          priority: 1,
          sequencing: 'all',
          interruptionBudget: { count: 1 },
          packages: { a: pkg('1.0.0') },
        }),
        scr('second', { priority: 2, packages: { a: pkg('1.0.0') } }),
      ],
      [node('n1', 1), node('n2', 2)],
    );
    step(w);
    step(w);
    const third = plan(w).actions;
    expect(creates(third).map((c) => `${c.skyhook}:${c.node}`)).toEqual(['first:n2']);
    applyActions(w, third);
    expect(nodeStatus(w, 'n1', 'second')).toBe('waiting');
    runToQuiet(w);
    expect(statusOf(w, 'second').status).toBe('complete');
  });
});

describe('node eligibility', () => {
  it('the ignore label blocks the node with a NodesIgnored condition; untolerated taints with TaintNotTolerable', () => {
    const ignored = node('ignored', 1, { 'skyhook.nvidia.com/test-node': 'yes', 'skyhook.nvidia.com/ignore': 'true' });
    const tainted = { ...node('tainted', 2), taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }] };
    const tolerated = {
      ...node('tolerated', 3),
      taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }],
    };
    const w = world([scr('s', { packages: { a: pkg('1.0.0') } })], [ignored, tainted, tolerated]);
    runToQuiet(w);
    expect(w.created.every((op) => op.node === 'tolerated')).toBe(true);
    expect(nodeStatus(w, 'ignored', 's')).toBe('blocked');
    expect(nodeStatus(w, 'tainted', 's')).toBe('blocked');
    expect(statusOf(w, 's')).toMatchObject({ status: 'blocked', completeNodes: '1/3' });
    expect(condition(w, 's', 'NodesIgnored')).toMatchObject({
      status: 'True',
      message: 'Node [ignored] has ignore label set. Skipping.',
    });
    expect(condition(w, 's', 'skyhook.nvidia.com/NodesIgnored')).toMatchObject({ status: 'True' });
    expect(condition(w, 's', 'TaintNotTolerable')).toMatchObject({
      status: 'True',
      message: 'Node [tainted] has taints that are not tolerable. Skipping.',
    });
    w.skyhooks[0]!.spec.additionalTolerations = [{ key: 'nvidia.com/gpu', operator: 'Exists' }];
    runToQuiet(w);
    expect(condition(w, 's', 'TaintNotTolerable')).toMatchObject({
      status: 'False',
      message: 'All nodes have tolerable taints.',
    });
  });

  it('a new matching node gets the packages', () => {
    const w = world([scr('s', { packages: { a: pkg('1.0.0') } })], [node('n1', 1)]);
    runToQuiet(w);
    w.nodes.push(node('n2', 2));
    expect(creates(plan(w).actions).map((c) => `${c.node}:${c.stage}`)).toEqual(['n2:apply']);
    runToQuiet(w);
    expect(statusOf(w, 's')).toMatchObject({ status: 'complete', completeNodes: '2/2' });
  });

  it('a malformed nodeState blocks only that node, with a NodeStateMalformed condition and no write to it', () => {
    const broken = node('broken-node-name', 1);
    broken.annotations['skyhook.nvidia.com/nodeState_s'] = '{not json';
    const w = world([scr('s', { packages: { a: pkg('1.0.0') } })], [broken, node('ok', 2)]);
    runToQuiet(w);
    expect(nodeStateOf(w, 'broken-node-name', 's')).toBe('{not json');
    expect(condition(w, 's', 'NodeStateMalformed')).toMatchObject({
      status: 'True',
      reason: 'ParseError',
      message:
        "nodeState annotation cannot be parsed on 1 node(s): broken-nod...; fix or delete annotation skyhook.nvidia.com/nodeState_s on each (deleting it re-runs this Skyhook's packages there); the node's skyhook.nvidia.com/waiting_s annotation says what is wrong",
    });
    // The node itself says what is wrong with its value and how to fix it (annotation and one Event).
    expect(nodeNamed(w, 'broken-node-name').annotations['skyhook.nvidia.com/waiting_s']).toMatch(
      /^NodeStateMalformed: annotation skyhook.nvidia.com\/nodeState_s cannot be parsed \(.*JSON.*\); fix it, or delete it to re-run/,
    );
    expect(nodeStatus(w, 'ok', 's')).toBe('complete');
    nodeNamed(w, 'broken-node-name').annotations['skyhook.nvidia.com/nodeState_s'] = '{}';
    runToQuiet(w);
    expect(condition(w, 's', 'NodeStateMalformed')).toBeUndefined();
    expect(nodeNamed(w, 'broken-node-name').annotations['skyhook.nvidia.com/waiting_s']).toBeUndefined();
    expect(statusOf(w, 's').status).toBe('complete');
  });

  it('a malformed nodeState is restored from the copy the operator wrote with it: no stage runs again, and an Event says so', () => {
    const w = world([scr('s', { packages: { a: pkg('1.0.0') } })], [node('n1', 1)]);
    step(w); // apply runs and completes
    applyActions(w, plan(w).actions); // its outcome recorded; config starts
    const written = nodeStateOf(w, 'n1', 's')!;
    expect(JSON.parse(written)['a|1.0.0']).toMatchObject({ stage: 'config', state: 'in_progress' });
    expect(nodeNamed(w, 'n1').annotations['skyhook.nvidia.com/nodeStateCopy_s']).toBe(written);
    nodeNamed(w, 'n1').annotations['skyhook.nvidia.com/nodeState_s'] = '{"a|1.0.0": {"stage": "conf';
    const restoring = plan(w).actions;
    expect(restoring).toContainEqual(
      expect.objectContaining({ kind: 'writeNodeState', node: 'n1', annotation: written }),
    );
    expect(restoring).toContainEqual(
      expect.objectContaining({ kind: 'event', reason: 'NodeStateRestored', type: 'Warning' }),
    );
    expect(creates(restoring)).toEqual([]);
    applyActions(w, restoring);
    runToQuiet(w);
    expect(w.created.map((op) => op.stage)).toEqual(['apply', 'config']);
    expect(statusOf(w, 's').status).toBe('complete');
    expect(condition(w, 's', 'NodeStateMalformed')).toBeUndefined();
  });
});

describe('failures', () => {
  it('a failing stage: package erroring with restarts, node and SCR erroring, counts right; retried after backoff', () => {
    const w = world(
      [scr('f', { packages: { dexter: pkg('1.2.3'), failure: pkg('1.2.3', { dependsOn: { dexter: '1.2.3' } }) } })],
      [node('n1', 1)],
    );
    const failing = (op: { package: string }) => op.package === 'failure';
    while (!w.ops.some((op) => failing(op) && op.phase === 'Running')) {
      applyActions(w, plan(w).actions);
      finishOps(w, 'Completed', (op) => !failing(op));
    }
    finishOps(w, 'Failed', failing);
    applyActions(w, plan(w).actions);
    expect(JSON.parse(nodeStateOf(w, 'n1', 'f')!)['failure|1.2.3']).toMatchObject({
      stage: 'apply',
      state: 'erroring',
      restarts: 1,
    });
    expect(nodeStatus(w, 'n1', 'f')).toBe('erroring');
    expect(statusOf(w, 'f')).toMatchObject({
      status: 'erroring',
      completeNodes: '0/1',
      nodesInProgress: 1,
      packageList: 'dexter:1.2.3,failure:1.2.3',
    });
    expect(condition(w, 'f', 'Ready')).toMatchObject({ status: 'False', reason: 'Erroring' });
    const waiting = plan(w);
    expect(creates(waiting.actions)).toEqual([]);
    expect(waiting.requeueAfterMs).toBe(10_000);
    w.now += 10_000;
    const retry = plan(w).actions;
    expect(retry).toContainEqual(expect.objectContaining({ kind: 'deleteStageOp' }));
    applyActions(w, retry);
    const recreated = creates(plan(w).actions);
    expect(recreated).toMatchObject([{ package: { name: 'failure' }, stage: 'apply', previousRestarts: 1 }]);
    runToQuiet(w);
    expect(statusOf(w, 'f').status).toBe('complete');
  });

  it('a configMap fix reaches a package erroring in apply: the ConfigMap is updated and apply re-runs at once', () => {
    const w = world(
      [scr('f', { packages: { hugepages: pkg('1.1.0', { configMap: { 'apply.sh': 'exit 3' } }) } })],
      [node('n1', 1)],
    );
    while (!w.ops.some((op) => op.phase === 'Running')) applyActions(w, plan(w).actions);
    finishOps(w, 'Failed');
    applyActions(w, plan(w).actions);
    expect(JSON.parse(nodeStateOf(w, 'n1', 'f')!)['hugepages|1.1.0']).toMatchObject({
      stage: 'apply',
      state: 'erroring',
    });
    expect(plan(w).requeueAfterMs).toBe(10_000);

    // Upstream would defer the change until the rollout settles, which a failing apply never does.
    w.skyhooks[0]!.spec.packages!.hugepages!.configMap = { 'apply.sh': 'echo fixed' };
    const fixing = plan(w).actions;
    expect(fixing).toContainEqual(
      expect.objectContaining({ kind: 'upsertPackageConfigMap', data: { 'apply.sh': 'echo fixed' } }),
    );
    expect(fixing).toContainEqual(expect.objectContaining({ kind: 'deleteStageOp' }));
    applyActions(w, fixing);
    expect(w.configMaps['f']?.['hugepages|1.1.0']).toEqual({ 'apply.sh': 'echo fixed' });
    expect(JSON.parse(nodeStateOf(w, 'n1', 'f')!)['hugepages|1.1.0']).toMatchObject({
      stage: 'apply',
      state: 'in_progress',
    });
    expect(creates(plan(w).actions)).toMatchObject([{ stage: 'apply', previousRestarts: 0 }]);
    runToQuiet(w);
    expect(w.created.filter((op) => op.package === 'hugepages').map((op) => op.stage)).toEqual([
      'apply',
      'apply',
      'config',
    ]);
    expect(statusOf(w, 'f').status).toBe('complete');
  });

  it('a dependsOn cycle blocks the SCR with an InvalidSpec condition instead of hanging', () => {
    const w = world(
      [
        scr('cyc', {
          packages: { a: pkg('1.0.0', { dependsOn: { b: '1.0.0' } }), b: pkg('1.0.0', { dependsOn: { a: '1.0.0' } }) },
        }),
      ],
      [node('n1', 1)],
    );
    runToQuiet(w);
    expect(w.created).toEqual([]);
    expect(statusOf(w, 'cyc').status).toBe('blocked');
    expect(condition(w, 'cyc', 'InvalidSpec')?.message).toContain('dependsOn forms a cycle: a -> b -> a');
  });
});

describe('spec updates', () => {
  const complete = () => {
    const w = world(
      [
        scr('u', {
          packages: {
            dexter: pkg('1.2.3', { configMap: { 'a.sh': '1', 'b.sh': '2' } }),
            dogs: pkg('1.2.6'),
            cats: pkg('1.0.0'),
            nullptr: pkg('2.0.0'),
          },
        }),
      ],
      [node('n1', 1), node('n2', 2)],
    );
    runToQuiet(w);
    w.created = [];
    return w;
  };

  it('a configMap change re-runs config only, on every node, once settled', () => {
    const w = complete();
    w.skyhooks[0]!.spec.packages!.dexter!.configMap = { 'a.sh': 'changed', 'b.sh': '2' };
    runToQuiet(w);
    expect(w.created.map((op) => `${op.node}:${op.package}:${op.stage}`).sort()).toEqual([
      'n1:dexter:config',
      'n2:dexter:config',
    ]);
    expect(statusOf(w, 'u').configUpdates).toEqual({ dexter: ['a.sh'] });
    expect(w.configMaps['u']?.['dexter|1.2.3']).toEqual({ 'a.sh': 'changed', 'b.sh': '2' });
  });

  it('a configMap change during the rollout is deferred until the package is complete everywhere', () => {
    const w = world(
      [scr('u', { packages: { dexter: pkg('1.2.3', { configMap: { 'a.sh': '1' } }) } })],
      [node('n1', 1)],
    );
    step(w);
    w.skyhooks[0]!.spec.packages!.dexter!.configMap = { 'a.sh': '2' };
    const during = plan(w).actions;
    expect(during.filter((a) => a.kind === 'upsertPackageConfigMap')).toEqual([]);
    runToQuiet(w);
    expect(w.created.filter((op) => op.stage === 'config')).toHaveLength(2);
    expect(w.configMaps['u']?.['dexter|1.2.3']).toEqual({ 'a.sh': '2' });
  });

  it('upgrade, downgrade and removal in one edit; then removing every package leaves {}', () => {
    const w = complete();
    const packages = w.skyhooks[0]!.spec.packages!;
    delete packages.cats;
    packages.dogs = pkg('1.2.5');
    packages.nullptr = pkg('2.0.1');
    const first = plan(w).actions;
    applyActions(w, first);
    expect(JSON.parse(nodeStateOf(w, 'n1', 'u')!)).toMatchObject({
      'dogs|1.2.6': { stage: 'uninstall', state: 'in_progress' },
      'dogs|1.2.5': { stage: 'uninstall', state: 'skipped' },
      'nullptr|2.0.1': { stage: 'upgrade', state: 'in_progress' },
      'cats|1.0.0': { stage: 'uninstall', state: 'in_progress' },
    });
    runToQuiet(w);
    expect(
      w.created
        .filter((op) => op.node === 'n1')
        .map((op) => `${op.package}@${op.version}:${op.stage}`)
        .sort(),
    ).toEqual([
      'cats@1.0.0:uninstall',
      'dogs@1.2.5:apply',
      'dogs@1.2.5:config',
      'dogs@1.2.6:uninstall',
      'nullptr@2.0.1:config',
      'nullptr@2.0.1:upgrade',
    ]);
    expect(statusOf(w, 'u')).toMatchObject({
      status: 'complete',
      packageList: 'dexter:1.2.3,dogs:1.2.5,nullptr:2.0.1',
    });
    w.skyhooks[0]!.spec.packages = {};
    runToQuiet(w);
    expect(nodeStateOf(w, 'n1', 'u')).toBe('{}');
    expect(statusOf(w, 'u')).toMatchObject({ status: 'complete', packageList: '' });
  });
});
