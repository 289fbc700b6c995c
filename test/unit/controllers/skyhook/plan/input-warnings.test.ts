import { describe, expect, it } from '@jest/globals';
import { IGNORE_NODE_LABEL, nodeAnnotations, SKYHOOK_ANNOTATIONS } from '../../../../../src/api/names.js';
import { applyActions, node, pkg, plan, policy, scr, SELECTOR_LABEL, world, type World } from './world.js';

const statusOf = (w: World, name: string) => w.skyhooks.find((s) => s.metadata.name === name)!.status!;

const warning = (w: World, name: string) => {
  applyActions(w, plan(w).actions);
  return statusOf(w, name).conditions?.find((c) => c.type === 'InputWarning');
};

describe('InputWarning: input accepted but probably not meant', () => {
  it('says nothing about ordinary input', () => {
    const w = world(
      [
        scr(
          's',
          { interruptionBudget: { count: 1 }, packages: { a: pkg('1.0.0') } },
          { [SKYHOOK_ANNOTATIONS.pause]: 'false' },
        ),
      ],
      [node('n0'), node('n1', 1)],
    );
    expect(warning(w, 's')).toBeUndefined();
  });

  it('names a pause/disable annotation that is neither "true" nor "false", and the fix', () => {
    const w = world(
      [scr('s', { packages: { a: pkg('1.0.0') } }, { [SKYHOOK_ANNOTATIONS.pause]: 'yes' })],
      [node('n0')],
    );
    expect(warning(w, 's')).toMatchObject({
      status: 'True',
      reason: 'InvalidAnnotation',
      message:
        'annotation skyhook.nvidia.com/pause="yes" is read as "false" (only "true" counts); set it to "true" or remove it',
    });
  });

  it('names the nodes whose ignore label is garbage', () => {
    const w = world(
      [scr('s', { packages: { a: pkg('1.0.0') } })],
      [node('n0', 0, { [SELECTOR_LABEL]: 'yes', [IGNORE_NODE_LABEL]: 'yes' }), node('n1', 1)],
    );
    expect(warning(w, 's')?.message).toBe(
      `label ${IGNORE_NODE_LABEL}="yes" on node(s) n0 is read as "false" (only "true" skips a node), so the node(s) are worked on; set it to "true" or "false"`,
    );
  });

  it('warns when the selector matches no node', () => {
    const w = world(
      [scr('s', { nodeSelectors: { matchLabels: { pool: 'typo' } }, packages: { a: pkg('1.0.0') } })],
      [node('n0')],
    );
    expect(warning(w, 's')).toMatchObject({ reason: 'NoMatchingNodes' });
  });

  it('warns about budgets of 0 (read as 1) and counts above the nodes, legacy and per compartment', () => {
    const zero = world([scr('s', { interruptionBudget: { percent: 0 }, packages: { a: pkg('1.0.0') } })], [node('n0')]);
    expect(warning(zero, 's')?.message).toContain('spec.interruptionBudget.percent is 0');
    const big = world(
      [scr('s', { interruptionBudget: { count: 500 }, packages: { a: pkg('1.0.0') } })],
      [node('n0'), node('n1', 1)],
    );
    expect(warning(big, 's')?.message).toContain('spec.interruptionBudget.count 500 is above the 2 targeted node(s)');
    const policed = world([scr('s', { deploymentPolicy: 'p', packages: { a: pkg('1.0.0') } })], [node('n0')]);
    policed.policies = [policy('p', { default: { budget: { count: 40 }, strategy: { fixed: {} } } })];
    expect(warning(policed, 's')?.message).toContain(
      'DeploymentPolicy p compartment __default__: budget count 40 is above its 1 node(s)',
    );
  });

  it('reports a package two SCRs install on the same node, on both, naming the other', () => {
    const w = world(
      [scr('a', { packages: { tool: pkg('1.0.0') } }), scr('b', { packages: { tool: pkg('2.0.0') } })],
      [node('n0')],
    );
    expect(warning(w, 'a')?.message).toBe(
      'Skyhook b installs package tool at version 2.0.0 (this one: 1.0.0), so the host ends with whichever runs last on node(s) n0; install each package from one Skyhook, or give them disjoint nodeSelectors',
    );
    expect(warning(w, 'b')?.message).toContain('Skyhook a installs package tool at version 1.0.0 (this one: 2.0.0)');
  });

  it('reports a cordon claim of a Skyhook that does not exist', () => {
    const stale = node('n0');
    stale.annotations[nodeAnnotations.cordon('ghost')] = 'true';
    const w = world([scr('s', { packages: { a: pkg('1.0.0') } })], [stale]);
    expect(warning(w, 's')).toMatchObject({ reason: 'StaleCordonClaim' });
  });

  it('uses MultipleWarnings as the reason when the kinds differ, and drops the condition once fixed', () => {
    const w = world(
      [
        scr(
          's',
          { interruptionBudget: { count: 9 }, packages: { a: pkg('1.0.0') } },
          { [SKYHOOK_ANNOTATIONS.disable]: 'True' },
        ),
      ],
      [node('n0')],
    );
    expect(warning(w, 's')?.reason).toBe('MultipleWarnings');
    w.skyhooks[0]!.metadata.annotations = {};
    w.skyhooks[0]!.spec.interruptionBudget = { count: 1 };
    expect(warning(w, 's')).toBeUndefined();
  });
});

describe('node records the operator owns, found with values it cannot have written', () => {
  const rewrittenEvents = (w: World) => {
    const { actions } = plan(w);
    applyActions(w, actions);
    return actions
      .filter((a) => a.kind === 'event' && a.reason === 'NodeRecordRewritten')
      .map((a) => (a.kind === 'event' ? a.message : ''));
  };

  it('rewrites a garbage status_ annotation and label, once, with a Warning Event naming them', () => {
    const n0 = node('n0');
    n0.annotations[nodeAnnotations.status('s')] = 'garbage';
    n0.labels['skyhook.nvidia.com/status_s'] = 'also-garbage';
    const w = world([scr('s', { packages: { a: pkg('1.0.0') } })], [n0]);
    const first = rewrittenEvents(w);
    expect(first).toEqual([
      expect.stringContaining(
        'annotation skyhook.nvidia.com/status_s="garbage", label skyhook.nvidia.com/status_s="also-garbage" cannot have been written by the operator',
      ),
    ]);
    expect(n0.annotations[nodeAnnotations.status('s')]).toBe('in_progress');
    expect(rewrittenEvents(w)).toEqual([]);
  });

  it('rewrites a recordedOps_ value that lists no uids', () => {
    const n0 = node('n0');
    n0.annotations[nodeAnnotations.recordedOps('s')] = '["all", "done"]';
    const w = world([scr('s', { packages: { a: pkg('1.0.0') } })], [n0]);
    expect(rewrittenEvents(w)).toEqual([
      expect.stringContaining('annotation skyhook.nvidia.com/recordedOps_s cannot have been written'),
    ]);
    expect(n0.annotations[nodeAnnotations.recordedOps('s')]).toBe('');
  });
});
