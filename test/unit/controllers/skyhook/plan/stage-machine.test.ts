import { describe, expect, it } from '@jest/globals';
import type { Package } from '../../../../../src/api/skyhook.js';
import {
  readNodeSkyhookRecord,
  serializeNodeState,
  type NodeState,
  type PackageStatus,
} from '../../../../../src/api/node-state.js';
import {
  recordedOpsUpdate,
  recordedOpUids,
  stageTimeoutSeconds,
  type NodeWork,
} from '../../../../../src/controllers/skyhook/plan/node-work.js';
import { nodeAnnotations } from '../../../../../src/api/names.js';
import {
  compareVersions,
  hasInterrupt,
  retryDelayMs,
} from '../../../../../src/controllers/skyhook/plan/package-rules.js';
import type { NodeView, StageOpSummary } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import {
  planNodePackages,
  type NodePackagesInput,
  type PackageStep,
} from '../../../../../src/controllers/skyhook/plan/stage-machine.js';
import {
  applyVersionChanges,
  recordOpOutcome,
  startConfigCycle,
} from '../../../../../src/controllers/skyhook/plan/state-transitions.js';
import { pkg } from './world.js';

const IMAGE = 'ghcr.io/nvidia/skyhook/agentless';
const NOW = 1_000_000;

function entry(
  name: string,
  version: string,
  stage: PackageStatus['stage'],
  state: PackageStatus['state'],
  restarts?: number,
): PackageStatus {
  return { name, version, image: IMAGE, stage, state, ...(restarts ? { restarts } : {}) };
}

function stateOf(...entries: PackageStatus[]): NodeState {
  return Object.fromEntries(entries.map((e) => [`${e.name}|${e.version}`, e]));
}

function op(
  name: string,
  version: string,
  stage: PackageStatus['stage'],
  extra: Partial<StageOpSummary> = {},
): StageOpSummary {
  return {
    name: `op-${name}-${version}-${stage}`,
    uid: `uid-${name}-${version}-${stage}`,
    skyhook: 's',
    node: 'n',
    package: name,
    version,
    image: IMAGE,
    stage,
    phase: 'Running',
    restarts: 0,
    previousRestarts: 0,
    recorded: false,
    ...extra,
  };
}

function steps(
  packages: Record<string, Package>,
  state: NodeState,
  extra: Partial<NodePackagesInput> = {},
): PackageStep[] {
  return planNodePackages({
    packages,
    state,
    configUpdates: {},
    ops: [],
    now: NOW,
    retry: { baseMs: 10_000, maxMs: 300_000 },
    ...extra,
  }).steps;
}

/** `name@version:stage` for each start step, `name:wait:reason` for waits. */
function summary(list: PackageStep[]): string[] {
  return list.map((step) => {
    switch (step.kind) {
      case 'start':
        return `start ${step.target.name}@${step.target.version}:${step.target.stage}`;
      case 'running':
        return `running ${step.target.name}:${step.target.stage}`;
      case 'replace':
        return `replace ${step.op.name}`;
      case 'wait':
        return `wait ${step.name}:${step.reason}`;
      case 'done':
        return `done ${step.name}`;
      default:
        throw new Error(`a step kind summary() does not know: ${JSON.stringify(step satisfies never)}`);
    }
  });
}

describe('stage transitions without interrupts', () => {
  const spec = { a: pkg('1.0.0') };
  it.each([
    ['first install starts apply', stateOf(), ['start a@1.0.0:apply']],
    ['apply complete → config', stateOf(entry('a', '1.0.0', 'apply', 'complete')), ['start a@1.0.0:config']],
    ['config complete → done', stateOf(entry('a', '1.0.0', 'config', 'complete')), ['done a']],
    [
      'an in-progress entry without op re-creates its stage',
      stateOf(entry('a', '1.0.0', 'config', 'in_progress')),
      ['start a@1.0.0:config'],
    ],
    ['upgrade complete → config', stateOf(entry('a', '1.0.0', 'upgrade', 'complete')), ['start a@1.0.0:config']],
    [
      'uninstall complete (downgrade released) → apply',
      stateOf(entry('a', '1.0.0', 'uninstall', 'complete')),
      ['start a@1.0.0:apply'],
    ],
  ])('%s', (_name, state, expected) => {
    expect(summary(steps(spec, state))).toEqual(expected);
  });

  it('is complete only at config/complete with no uninstall pending', () => {
    const done = planNodePackages({
      packages: spec,
      state: stateOf(entry('a', '1.0.0', 'config', 'complete')),
      configUpdates: {},
      ops: [],
      now: NOW,
      retry: { baseMs: 1, maxMs: 1 },
    });
    expect(done.complete).toBe(true);
    const pendingUninstall = stateOf(
      entry('a', '1.0.0', 'config', 'complete'),
      entry('gone', '1.0.0', 'uninstall', 'in_progress'),
    );
    expect(
      planNodePackages({
        packages: spec,
        state: pendingUninstall,
        configUpdates: {},
        ops: [],
        now: NOW,
        retry: { baseMs: 1, maxMs: 1 },
      }).complete,
    ).toBe(false);
  });
});

describe('version changes', () => {
  it('upgrade: a higher version runs upgrade, then config; the old entry goes when upgrade completes', () => {
    const spec = { a: pkg('1.1.0') };
    const changed = applyVersionChanges(stateOf(entry('a', '1.0.0', 'config', 'complete')), spec);
    expect(changed.changedPackages).toEqual(['a']);
    expect(changed.state['a|1.1.0']).toMatchObject({ stage: 'upgrade', state: 'in_progress' });
    expect(summary(steps(spec, changed.state))).toEqual(['start a@1.1.0:upgrade']);
    const upgraded = recordOpOutcome(changed.state, op('a', '1.1.0', 'upgrade', { phase: 'Completed' }));
    expect(Object.keys(upgraded)).toEqual(['a|1.1.0']);
    expect(summary(steps(spec, upgraded))).toEqual(['start a@1.1.0:config']);
  });

  it('downgrade: uninstall of the old version first, the new one waits skipped, then apply', () => {
    const spec = { dogs: pkg('1.2.5') };
    const changed = applyVersionChanges(stateOf(entry('dogs', '1.2.6', 'config', 'complete')), spec).state;
    expect(changed['dogs|1.2.6']).toMatchObject({ stage: 'uninstall', state: 'in_progress' });
    expect(changed['dogs|1.2.5']).toMatchObject({ stage: 'uninstall', state: 'skipped' });
    expect(summary(steps(spec, changed))).toEqual(['start dogs@1.2.6:uninstall', 'wait dogs:skipped']);
    const uninstalled = recordOpOutcome(changed, op('dogs', '1.2.6', 'uninstall', { phase: 'Completed' }));
    expect(uninstalled).toEqual(stateOf({ ...entry('dogs', '1.2.5', 'uninstall', 'complete') }));
    expect(summary(steps(spec, uninstalled))).toEqual(['start dogs@1.2.5:apply']);
  });

  it('removal: only uninstall runs, then the entry is deleted (the annotation becomes {})', () => {
    const changed = applyVersionChanges(stateOf(entry('cats', '1.0.0', 'config', 'complete')), {}).state;
    expect(summary(steps({}, changed))).toEqual(['start cats@1.0.0:uninstall']);
    const removed = recordOpOutcome(changed, op('cats', '1.0.0', 'uninstall', { phase: 'Completed' }));
    expect(serializeNodeState(removed)).toBe('{}');
  });

  it('is idempotent: applying version changes twice changes nothing more', () => {
    const spec = { a: pkg('1.1.0'), b: pkg('0.9.0') };
    const once = applyVersionChanges(
      stateOf(
        entry('a', '1.0.0', 'config', 'complete'),
        entry('b', '1.0.0', 'config', 'complete'),
        entry('c', '1.0.0', 'apply', 'complete'),
      ),
      spec,
    ).state;
    expect(applyVersionChanges(once, spec).state).toEqual(once);
  });
});

describe('dependsOn ordering', () => {
  const spec = { aa: pkg('1.0.0'), bb: pkg('1.0.0'), cc: pkg('1.0.0', { dependsOn: { aa: '1.0.0' } }) };

  it('a package waits for its own parents, not for every root', () => {
    expect(summary(steps(spec, stateOf()))).toEqual([
      'start aa@1.0.0:apply',
      'start bb@1.0.0:apply',
      'wait cc:dependencies',
    ]);
    const aaDone = stateOf(entry('aa', '1.0.0', 'config', 'complete'), entry('bb', '1.0.0', 'apply', 'in_progress'));
    expect(summary(steps(spec, aaDone, { ops: [op('bb', '1.0.0', 'apply')] }))).toEqual([
      'done aa',
      'running bb:apply',
      'start cc@1.0.0:apply',
    ]);
  });

  it('a parent half way (apply done, config not) still holds its children', () => {
    expect(summary(steps(spec, stateOf(entry('aa', '1.0.0', 'apply', 'complete'))))).toContain('wait cc:dependencies');
  });

  it('a cycle is reported as a wait, never a hang or a start', () => {
    const cyclic = {
      a: pkg('1.0.0', { dependsOn: { b: '1.0.0' } }),
      b: pkg('1.0.0', { dependsOn: { a: '1.0.0' } }),
      c: pkg('1.0.0'),
    };
    expect(summary(steps(cyclic, stateOf()))).toEqual(['wait a:cycle', 'wait b:cycle', 'start c@1.0.0:apply']);
  });
});

describe('failures, retries and timeouts', () => {
  const spec = { a: pkg('1.0.0') };

  it('a running op with failed attempts makes the entry erroring with its restarts', () => {
    const state = recordOpOutcome(
      stateOf(entry('a', '1.0.0', 'apply', 'in_progress')),
      op('a', '1.0.0', 'apply', { restarts: 2 }),
    );
    expect(state['a|1.0.0']).toEqual(entry('a', '1.0.0', 'apply', 'erroring', 2));
  });

  it('a failed op waits out the backoff, then is replaced, then the stage restarts keeping the count', () => {
    const failed = op('a', '1.0.0', 'apply', {
      phase: 'Failed',
      restarts: 4,
      finishedAt: NOW,
      recorded: true,
      failureReason: 'DeadlineExceeded',
    });
    const state = recordOpOutcome(stateOf(entry('a', '1.0.0', 'apply', 'in_progress')), { ...failed, recorded: false });
    expect(state['a|1.0.0']).toEqual(entry('a', '1.0.0', 'apply', 'erroring', 4));
    const waiting = steps(spec, state, { ops: [failed] });
    expect(waiting).toEqual([
      {
        kind: 'wait',
        name: 'a',
        version: '1.0.0',
        stage: 'apply',
        reason: 'backoff',
        until: NOW + retryDelayMs(4, 10_000, 300_000),
      },
    ]);
    expect(summary(steps(spec, state, { ops: [failed], now: NOW + 80_000 }))).toEqual([`replace ${failed.name}`]);
    const restarted = steps(spec, state, { ops: [] });
    expect(restarted).toMatchObject([{ kind: 'start', target: { stage: 'apply', restarts: 4 } }]);
  });

  it('restarts accumulate across ops through previousRestarts', () => {
    const state = recordOpOutcome(
      stateOf(entry('a', '1.0.0', 'apply', 'erroring', 4)),
      op('a', '1.0.0', 'apply', { phase: 'Failed', restarts: 1, previousRestarts: 4 }),
    );
    expect(state['a|1.0.0']?.restarts).toBe(5);
  });

  it('a stale outcome never moves a package backwards', () => {
    const state = stateOf(entry('a', '1.0.0', 'config', 'in_progress'));
    expect(recordOpOutcome(state, op('a', '1.0.0', 'apply', { phase: 'Completed' }))).toBe(state);
    expect(recordOpOutcome(state, op('a', '1.0.0', 'apply', { phase: 'Failed' }))).toBe(state);
  });

  it('backoff doubles per restart up to the cap', () => {
    expect([1, 2, 3, 10].map((n) => retryDelayMs(n, 10_000, 300_000))).toEqual([10_000, 20_000, 40_000, 300_000]);
  });

  it('stageTimeout becomes whole seconds, 0 means none, unset the default', () => {
    expect(stageTimeoutSeconds(pkg('1', { stageTimeout: '1m30s' }), 3600)).toBe(90);
    expect(stageTimeoutSeconds(pkg('1', { stageTimeout: '1500ms' }), 3600)).toBe(2);
    expect(stageTimeoutSeconds(pkg('1', { stageTimeout: '0' }), 3600)).toBe(0);
    expect(stageTimeoutSeconds(pkg('1'), 3600)).toBe(3600);
  });
});

describe('ops and the stage they hold', () => {
  const spec = { a: pkg('1.0.0') };

  it('a live op for the wanted stage is running; a stale one is replaced; one being deleted is waited for', () => {
    const state = stateOf(entry('a', '1.0.0', 'apply', 'in_progress'));
    expect(summary(steps(spec, state, { ops: [op('a', '1.0.0', 'apply')] }))).toEqual(['running a:apply']);
    expect(summary(steps(spec, state, { ops: [op('a', '1.0.0', 'apply', { stale: true })] }))).toEqual([
      'replace op-a-1.0.0-apply',
    ]);
    expect(summary(steps(spec, state, { ops: [op('a', '1.0.0', 'apply', { deleting: true })] }))).toEqual([
      'wait a:deleting',
    ]);
  });

  it('a finished op of an earlier cycle is deleted before the stage runs again', () => {
    const old = op('a', '1.0.0', 'config', { phase: 'Completed', recorded: true });
    expect(summary(steps(spec, stateOf(entry('a', '1.0.0', 'config', 'in_progress')), { ops: [old] }))).toEqual([
      `replace ${old.name}`,
    ]);
  });

  it('live ops no package wants are strays', () => {
    const stray = op('a', '1.0.0', 'upgrade');
    const result = planNodePackages({
      packages: spec,
      state: stateOf(entry('a', '1.0.0', 'config', 'complete')),
      configUpdates: {},
      ops: [stray],
      now: NOW,
      retry: { baseMs: 1, maxMs: 1 },
    });
    expect(result.strayOps).toEqual([stray]);
  });
});

describe('interrupt stages (modelled for issue 7)', () => {
  const spec = {
    dax: pkg('1.2.3', { interrupt: { type: 'service', services: ['containerd'] } }),
    zeb: pkg('1.0.0', { interrupt: { type: 'reboot' } }),
  };

  it('config → interrupt → post-interrupt → done', () => {
    expect(
      steps(
        spec,
        stateOf(entry('dax', '1.2.3', 'config', 'complete'), entry('zeb', '1.0.0', 'post-interrupt', 'complete')),
      ),
    ).toMatchObject([
      { kind: 'start', target: { stage: 'interrupt', interrupt: { type: 'service', services: ['containerd'] } } },
      { kind: 'done', name: 'zeb' },
    ]);
    expect(
      summary(
        steps(
          spec,
          stateOf(entry('dax', '1.2.3', 'interrupt', 'complete'), entry('zeb', '1.0.0', 'post-interrupt', 'complete')),
        ),
      ),
    ).toEqual(['start dax@1.2.3:post-interrupt', 'done zeb']);
  });

  it('an interrupt completing also completes the interrupts other packages skipped for it', () => {
    const state = stateOf(
      entry('dax', '1.2.3', 'interrupt', 'in_progress'),
      entry('zeb', '1.0.0', 'interrupt', 'skipped'),
    );
    expect(summary(steps(spec, state))).toEqual(['start dax@1.2.3:interrupt', 'wait zeb:skipped']);
    const after = recordOpOutcome(state, op('dax', '1.2.3', 'interrupt', { phase: 'Completed' }));
    expect(after['zeb|1.0.0']).toMatchObject({ stage: 'interrupt', state: 'complete' });
  });

  it('a config change on a key without a configInterrupt ends at config, even with a package interrupt', () => {
    const withGlob = pkg('1.0.0', {
      interrupt: { type: 'reboot' },
      configMap: { 'a.properties': '1', 'b.sh': '2' },
      configInterrupts: { '*.properties': { type: 'service', services: ['x'] } },
    });
    expect(hasInterrupt(withGlob, ['b.sh'])).toBe(false);
    expect(hasInterrupt(withGlob, ['a.properties'])).toBe(true);
    expect(hasInterrupt(withGlob, undefined)).toBe(true);
    const state = startConfigCycle(stateOf(entry('p', '1.0.0', 'post-interrupt', 'complete')), 'p', withGlob);
    expect(state['p|1.0.0']).toMatchObject({ stage: 'config', state: 'in_progress' });
    const done = stateOf(entry('p', '1.0.0', 'config', 'complete'));
    expect(summary(steps({ p: withGlob }, done, { configUpdates: { p: ['b.sh'] } }))).toEqual(['done p']);
    expect(summary(steps({ p: withGlob }, done, { configUpdates: { p: ['a.properties'] } }))).toEqual([
      'start p@1.0.0:interrupt',
    ]);
  });
});

describe('version order (Go x/mod/semver)', () => {
  it.each([
    ['1.2', '1.2.1', -1],
    ['2.0.0-rc1', '2.0.0', -1],
    ['v1', '1.0.0', 0],
    ['2024.7.7-test', '2024.7.6', 1],
    ['1.2.3+build', '1.2.3', 0],
  ])('%s vs %s', (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
  });
});

describe('recorded op outcomes (recordedOps_<scr> on the node)', () => {
  const node = (annotations: Record<string, string> = {}): NodeView => ({
    name: 'n',
    createdAt: 0,
    labels: {},
    annotations,
    taints: [],
  });
  const work = (annotations: Record<string, string>, ops: StageOpSummary[]): NodeWork => ({
    node: node(annotations),
    record: readNodeSkyhookRecord(node(annotations), 's'),
    state: {},
    ops,
    recorded: [],
    recordedUids: recordedOpUids(node(annotations), 's'),
  });
  const key = nodeAnnotations.recordedOps('s');

  it('lists every finished op once a new outcome is recorded, dropping ops that are gone', () => {
    const done = op('a', '1.0.0', 'apply', { phase: 'Completed' });
    const failed = op('b', '1.0.0', 'apply', { phase: 'Failed', uid: 'uid-b2' });
    const running = op('c', '1.0.0', 'apply');
    expect(recordedOpsUpdate(work({ [key]: 'uid-gone,uid-a-1.0.0-apply' }, [done, failed, running]))).toBe(
      'uid-a-1.0.0-apply,uid-b2',
    );
    expect(recordedOpUids(node({ [key]: 'x,y' }), 's')).toEqual(new Set(['x', 'y']));
  });

  it('writes nothing when every finished op is already listed (a gone uid alone is not worth a write)', () => {
    const done = op('a', '1.0.0', 'apply', { phase: 'Completed' });
    expect(recordedOpsUpdate(work({ [key]: 'uid-gone,uid-a-1.0.0-apply' }, [done]))).toBeUndefined();
    expect(recordedOpsUpdate(work({}, [op('c', '1.0.0', 'apply')]))).toBeUndefined();
  });
});
