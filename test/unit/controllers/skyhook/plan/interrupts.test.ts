import { describe, expect, it } from '@jest/globals';
import { nodeAnnotations, RUNTIME_REQUIRED_CORDON_ANNOTATION } from '../../../../../src/api/names.js';
import { cordonAfterRelease } from '../../../../../src/jobs/cordon/claims.js';
import {
  drainBlockedCondition,
  drainBlockersFromMessage,
  stageDrainOptions,
} from '../../../../../src/controllers/skyhook/plan/drain-settings.js';
import { mergeInterrupts, packageInterrupts } from '../../../../../src/controllers/skyhook/plan/interrupt-merge.js';
import type { PlannerAction } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import {
  applyActions,
  finishOps,
  node,
  nodeNamed,
  nodeStateOf,
  pkg,
  plan,
  runToQuiet,
  scr,
  world,
  type World,
} from './world.js';

const reboot = { type: 'reboot' as const };
const kinds = (actions: PlannerAction[]) => actions.map((a) => a.kind);
const step = (w: World): PlannerAction[] => {
  const { actions } = plan(w);
  applyActions(w, actions);
  return actions;
};

describe('interrupt merge', () => {
  it('unions services, lets the strongest type win and keeps the first package by name as owner', () => {
    expect(
      mergeInterrupts([
        { package: 'zeb', interrupts: [{ type: 'service', services: ['cron'] }] },
        { package: 'dax', interrupts: [{ type: 'service', services: ['foobar', 'containerd'] }] },
      ]),
    ).toEqual({ owner: 'dax', interrupt: { type: 'service', services: ['containerd', 'cron', 'foobar'] } });
    expect(
      mergeInterrupts([
        { package: 'aa', interrupts: [{ type: 'noop' }] },
        { package: 'bb', interrupts: [{ type: 'restartAllServices' }] },
        { package: 'cc', interrupts: [reboot] },
        { package: 'dd', interrupts: [reboot] },
      ]),
    ).toEqual({ owner: 'cc', interrupt: reboot });
    expect(mergeInterrupts([])).toBeUndefined();
  });

  it('on a config change only configInterrupts matching a changed key count (exact key or * glob)', () => {
    const spec = pkg('1.0.0', {
      interrupt: reboot,
      configMap: { a: '1', 'x.properties': '2' },
      configInterrupts: { a: { type: 'service', services: ['a'] }, '*.properties': { type: 'noop' } },
    });
    expect(packageInterrupts(spec, undefined)).toEqual([reboot]);
    expect(packageInterrupts(spec, ['b'])).toEqual([]);
    expect(packageInterrupts(spec, ['x.properties'])).toEqual([{ type: 'noop' }]);
    expect(packageInterrupts(spec, ['a', 'x.properties'])).toEqual([
      { type: 'noop' },
      { type: 'service', services: ['a'] },
    ]);
  });
});

describe('interrupt flow on a node', () => {
  it('cordons, waits while a non-interrupt pod runs (visible), drains with the first stage, interrupts after config, then uncordons', () => {
    const w = world(
      [
        scr('s', {
          packages: { dax: pkg('1.2.3', { interrupt: reboot }) },
          podNonInterruptLabels: { matchLabels: { dontmess: 'withme' } },
        }),
      ],
      [node('n0')],
    );
    const n0 = nodeNamed(w, 'n0');
    n0.pods = [{ namespace: 'default', name: 'keep', labels: { dontmess: 'withme' }, phase: 'Running' }];

    const first = step(w);
    expect(first).toContainEqual(
      expect.objectContaining({ kind: 'cordonNode', node: 'n0', claim: nodeAnnotations.cordon('s') }),
    );
    expect(kinds(first)).not.toContain('createStageOp');
    expect(n0.unschedulable).toBe(true);

    const held = step(w);
    expect(kinds(held)).not.toContain('createStageOp');
    expect(n0.annotations[nodeAnnotations.waiting('s')]).toBe('NonInterruptPodsRunning: default/keep');
    expect(held).toContainEqual(
      expect.objectContaining({
        kind: 'event',
        reason: 'NonInterruptPodsRunning',
        involved: { kind: 'Node', name: 'n0' },
      }),
    );
    const blocked = w.skyhooks[0]!.status?.conditions?.find((c) => c.type === 'Blocked');
    expect(blocked).toMatchObject({
      status: 'True',
      reason: 'NonInterruptPodsRunning',
      message: '1 node blocked by non-interrupt pods (n0). Waiting.',
    });
    expect(step(w).filter((a) => a.kind !== 'event')).toEqual([]);

    n0.pods = [];
    step(w);
    expect(w.creates.map((c) => [c.stage, c.cordon, c.drain?.enabled])).toEqual([['apply', true, true]]);
    expect(n0.annotations[nodeAnnotations.waiting('s')]).toBeUndefined();
    expect(w.skyhooks[0]!.status?.conditions?.some((c) => c.type === 'Blocked')).toBe(false);

    runToQuiet(w);
    expect(w.creates.map((c) => c.stage)).toEqual(['apply', 'config', 'interrupt', 'post-interrupt']);
    expect(w.creates.find((c) => c.stage === 'interrupt')).toMatchObject({
      interrupt: reboot,
      cordon: true,
      drain: { enabled: true },
    });
    expect(w.creates.find((c) => c.stage === 'post-interrupt')).toMatchObject({ cordon: true });
    expect(w.creates.find((c) => c.stage === 'post-interrupt')?.drain).toBeUndefined();
    expect(nodeStateOf(w, 'n0', 's')).toBe(
      '{"dax|1.2.3":{"name":"dax","version":"1.2.3","image":"ghcr.io/nvidia/skyhook/agentless","stage":"post-interrupt","state":"complete"}}',
    );
    expect(n0.unschedulable).toBe(false);
    expect(n0.annotations[nodeAnnotations.cordon('s')]).toBeUndefined();
  });

  it('merges the interrupts of packages due together: one interrupt op, the other package skipped then complete', () => {
    const w = world(
      [
        scr('interrupt-grouping', {
          packages: {
            dax: pkg('1.2.3', { interrupt: { type: 'service', services: ['containerd', 'foobar'] } }),
            zeb: pkg('1.2.3', { interrupt: { type: 'service', services: ['cron'] } }),
          },
        }),
      ],
      [node('n0')],
    );
    let sawSkipped = false;
    runToQuiet(w, 50, () => {
      sawSkipped ||= (nodeStateOf(w, 'n0', 'interrupt-grouping') ?? '').includes(
        '"stage":"interrupt","state":"skipped"',
      );
    });
    const interrupts = w.creates.filter((c) => c.stage === 'interrupt');
    expect(interrupts).toHaveLength(1);
    expect(interrupts[0]).toMatchObject({
      package: { name: 'dax' },
      interrupt: { type: 'service', services: ['containerd', 'cron', 'foobar'] },
    });
    expect(sawSkipped).toBe(true);
    expect(nodeStateOf(w, 'n0', 'interrupt-grouping')).toBe(
      '{"dax|1.2.3":{"name":"dax","version":"1.2.3","image":"ghcr.io/nvidia/skyhook/agentless","stage":"post-interrupt","state":"complete"},' +
        '"zeb|1.2.3":{"name":"zeb","version":"1.2.3","image":"ghcr.io/nvidia/skyhook/agentless","stage":"post-interrupt","state":"complete"}}',
    );
  });

  it('the interrupt waits for the other package still at config, and for non-interrupt packages running on the node', () => {
    const w = world(
      [
        scr('s', {
          packages: {
            aa: pkg('1.0.0', { interrupt: reboot }),
            bb: pkg('1.0.0', { interrupt: { type: 'noop' } }),
            plain: pkg('1.0.0'),
          },
        }),
      ],
      [node('n0')],
    );
    step(w); // cordon
    step(w); // apply ×3
    finishOps(w, 'Completed', (op) => op.package === 'aa');
    step(w);
    finishOps(w, 'Completed', (op) => op.package === 'aa');
    const held = step(w);
    expect(kinds(held)).not.toContain('createStageOp');
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('s')]).toMatch(
      /^InterruptMerge: interrupt waits for bb/,
    );
    runToQuiet(w);
    expect(w.creates.filter((c) => c.stage === 'interrupt').map((c) => [c.package.name, c.interrupt?.type])).toEqual([
      ['aa', 'reboot'],
    ]);
  });

  it('a config change on a key without configInterrupt runs config only, even with a reboot; a matching key or glob runs the interrupt', () => {
    const base = {
      interrupt: reboot,
      configInterrupts: {
        exact: { type: 'service' as const, services: ['x'] },
        '*.properties': { type: 'noop' as const },
      },
    };
    const skyhook = scr('config-skyhook', {
      packages: { dax: pkg('1.0.0', { ...base, configMap: { exact: '1', 'a.properties': '1', other: '1' } }) },
    });
    const w = world([skyhook], [node('n0')]);
    runToQuiet(w);
    const change = (data: Record<string, string>): string[] => {
      skyhook.spec.packages!.dax!.configMap = data;
      const before = w.creates.length;
      runToQuiet(w);
      return w.creates
        .slice(before)
        .map((c) => `${c.stage}${c.interrupt ? `:${c.interrupt.type}` : ''}${c.drain ? '+drain' : ''}`);
    };
    expect(change({ exact: '1', 'a.properties': '1', other: '2' })).toEqual(['config']);
    expect(change({ exact: '2', 'a.properties': '1', other: '2' })).toEqual([
      'config+drain',
      'interrupt:service+drain',
      'post-interrupt',
    ]);
    expect(change({ exact: '2', 'a.properties': '2', other: '2' })).toEqual([
      'config+drain',
      'interrupt:noop+drain',
      'post-interrupt',
    ]);
    expect(nodeNamed(w, 'n0').unschedulable).toBe(false);
  });
});

describe('the budget as a watcher sees it', () => {
  it('never shows more nodes cordoned or in progress than the budget, action by action (a finished node lets go before the next one is marked)', () => {
    const w = world(
      [scr('s', { packages: { dax: pkg('1.2.3', { interrupt: reboot }) }, interruptionBudget: { count: 1 } })],
      [node('n0', 0), node('n1', 1), node('n2', 2)],
    );
    const taken = (): string[] =>
      w.nodes
        .filter(
          (n) =>
            n.unschedulable || ['in_progress', 'erroring'].includes(n.annotations[nodeAnnotations.status('s')] ?? ''),
        )
        .map((n) => n.name);
    let most: string[] = [];
    for (let round = 0; round < 60 && w.skyhooks[0]!.status?.status !== 'complete'; round++) {
      for (const action of plan(w).actions) {
        applyActions(w, [action]);
        if (taken().length > most.length) most = taken();
      }
      finishOps(w);
      w.now += 1_000;
    }
    expect(w.skyhooks[0]!.status?.status).toBe('complete');
    expect(most).toHaveLength(1);
  });
});

describe('cordon ownership', () => {
  it('a node another SCR also holds stays cordoned when we finish; a foreign cordon is never claimed nor lifted', () => {
    for (const [claims, expectedOwnClaimDuringWork] of [
      [{ [nodeAnnotations.cordon('other')]: 'true' }, true],
      [{}, false],
    ] as const) {
      const w = world([scr('s', { packages: { dax: pkg('1.0.0', { interrupt: reboot }) } })], [node('n0')]);
      const n0 = nodeNamed(w, 'n0');
      n0.unschedulable = true;
      Object.assign(n0.annotations, claims);
      let claimed = false;
      runToQuiet(w, 50, () => {
        claimed ||= n0.annotations[nodeAnnotations.cordon('s')] === 'true';
        expect(n0.unschedulable).toBe(true);
      });
      expect(claimed).toBe(expectedOwnClaimDuringWork);
      expect(w.creates.map((c) => c.stage)).toEqual(['apply', 'config', 'interrupt', 'post-interrupt']);
      expect(n0.unschedulable).toBe(true);
      expect(n0.annotations[nodeAnnotations.cordon('s')]).toBeUndefined();
    }
  });

  it('release rule: uncordon only when the last claim goes and no NodeOp holds the node', () => {
    const mine = nodeAnnotations.cordon('a');
    expect(cordonAfterRelease({ unschedulable: true, annotations: { [mine]: 'true' } }, mine)).toEqual({
      remove: [mine],
      uncordon: true,
    });
    expect(
      cordonAfterRelease(
        { unschedulable: true, annotations: { [mine]: 'true', [nodeAnnotations.cordon('b')]: 'true' } },
        mine,
      ),
    ).toEqual({ remove: [mine], uncordon: false });
    expect(
      cordonAfterRelease(
        { unschedulable: true, annotations: { [mine]: 'true', [RUNTIME_REQUIRED_CORDON_ANNOTATION]: 'true' } },
        mine,
      ).uncordon,
    ).toBe(false);
    expect(
      cordonAfterRelease(
        { unschedulable: true, annotations: { [mine]: 'true', 'skyhook.nvidia.com/cordoned-by': 'ns/op@uid' } },
        mine,
      ).uncordon,
    ).toBe(false);
    expect(cordonAfterRelease({ unschedulable: true, annotations: {} }, mine)).toEqual({ remove: [], uncordon: false });
  });
});

describe('drain', () => {
  it('drainConfig becomes NodeOp drain options with newer upstream defaults, durations rounded up', () => {
    expect(stageDrainOptions(undefined)).toEqual({
      enabled: true,
      disableEviction: false,
      deleteEmptyDirData: true,
      force: true,
      ignoreDaemonSets: true,
    });
    expect(
      stageDrainOptions({
        force: false,
        deleteEmptyDirData: false,
        disableEviction: true,
        ignoreDaemonSets: false,
        timeout: '90s',
        gracePeriod: '1500ms',
      }),
    ).toEqual({
      enabled: true,
      disableEviction: true,
      deleteEmptyDirData: false,
      force: false,
      ignoreDaemonSets: false,
      timeoutSeconds: 90,
      gracePeriodSeconds: 2,
    });
  });

  it('drain blockers from the op become the DrainBlocked condition, the node annotations and an event', () => {
    const w = world(
      [scr('s', { packages: { dax: pkg('1.0.0', { interrupt: reboot }) } })],
      [node('n0'), node('n1', 1)],
    );
    step(w);
    step(w);
    const detail = "Cannot evict pod as it would violate the pod's disruption budget.";
    w.ops = w.ops.map((op) =>
      op.node === 'n0'
        ? {
            ...op,
            phase: 'Pending',
            drainBlockers: [{ namespace: 'default', name: 'web-1', reason: 'PodDisruptionBudget', detail }],
          }
        : op,
    );
    const actions = step(w);
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('s')]).toBe(
      `DrainBlocked: default/web-1 (${detail})`,
    );
    expect(JSON.parse(nodeNamed(w, 'n0').annotations[nodeAnnotations.drainBlocked('s')]!)).toHaveLength(1);
    expect(actions).toContainEqual(expect.objectContaining({ kind: 'event', reason: 'DrainBlocked' }));
    expect(w.skyhooks[0]!.status?.conditions?.find((c) => c.type === 'DrainBlocked')).toMatchObject({
      status: 'True',
      reason: 'PodDisruptionBudget',
      message: `1/2 nodes blocked draining (n0); default/web-1 on n0: ${detail}`,
    });
  });

  it('reads blockers from NodeOp drain messages', () => {
    expect(
      drainBlockersFromMessage(
        'drain of node n0 refused: default/a is not managed by a controller (set drainOptions.force to evict it); ns/b is uses emptyDir data (x)',
      ),
    ).toEqual([
      {
        namespace: 'default',
        name: 'a',
        reason: 'UnmanagedPod',
        detail: 'not managed by a controller (set drainOptions.force to evict it)',
      },
      { namespace: 'ns', name: 'b', reason: 'EmptyDirData', detail: 'uses emptyDir data (x)' },
    ]);
    expect(
      drainBlockersFromMessage(
        'drain of node n0 timed out after 5s; still there: default/web (disruption budget web-pdb needs 1), x/y (terminating)',
      ).map((b) => b.reason),
    ).toEqual(['PodDisruptionBudget', 'Terminating']);
    expect(drainBlockersFromMessage('Job x created')).toEqual([]);
    expect(
      drainBlockedCondition(
        {
          a: [{ namespace: 'n', name: 'p', reason: 'UnmanagedPod' }],
          b: [{ namespace: 'n', name: 'q', reason: 'EmptyDirData' }],
        },
        3,
      )?.reason,
    ).toBe('MultipleCauses');
  });
});

describe('other waits are visible', () => {
  it('an untolerated taint and a higher-priority SCR are named on the node', () => {
    const w = world(
      [
        scr('first', { priority: 1, packages: { a: pkg('1.0.0') } }),
        scr('second', { priority: 2, packages: { b: pkg('1.0.0') } }),
      ],
      [node('n0'), node('n1', 1)],
    );
    nodeNamed(w, 'n1').taints.push({ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' });
    const actions = step(w);
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('second')]).toBe('HigherPrioritySkyhook: first');
    expect(nodeNamed(w, 'n1').annotations[nodeAnnotations.waiting('first')]).toBe(
      'TaintNotTolerable: nvidia.com/gpu=present:NoSchedule',
    );
    expect(actions).toContainEqual(
      expect.objectContaining({ kind: 'event', reason: 'TaintNotTolerable', involved: { kind: 'Node', name: 'n1' } }),
    );
  });
});
