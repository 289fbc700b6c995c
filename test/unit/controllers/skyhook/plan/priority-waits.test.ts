/**
 * Several SCRs over the same nodes: a node waiting for higher-priority SCRs shows it in its
 * `waiting_<scr>` annotation, written once per wait (not once per higher SCR finishing there), and
 * the routine ordering wait gets no Event.
 */
import { describe, expect, it } from '@jest/globals';
import { nodeAnnotations } from '../../../../../src/api/names.js';
import type { PlannerAction } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { applyActions, finishOps, node, nodeNamed, pkg, plan, scr, world, type World } from './world.js';

const three = () => [
  scr('first', { priority: 1, packages: { a: pkg('1.0.0') } }),
  scr('second', { priority: 2, packages: { b: pkg('1.0.0') } }),
  scr('third', { priority: 3, packages: { c: pkg('1.0.0') } }),
];

/** Runs the rollout to its end; every value written to `key` on n0, in order, and every action. */
function rollOut(w: World, key: string): { written: (string | null)[]; actions: PlannerAction[] } {
  const written: (string | null)[] = [];
  const actions: PlannerAction[] = [];
  for (let round = 0; round < 60; round++) {
    const result = plan(w);
    actions.push(...result.actions);
    for (const action of result.actions)
      if (action.kind === 'setNodeAnnotations' && action.node === 'n0' && key in action.annotations)
        written.push(action.annotations[key] ?? null);
    applyActions(w, result.actions);
    if (!w.ops.some((op) => op.phase === 'Running') && !result.actions.some((a) => a.kind !== 'event')) break;
    finishOps(w);
    w.now += 1_000;
  }
  return { written, actions };
}

describe('priority waits', () => {
  it('are written once per wait, not once per higher-priority SCR finishing, and get no Event', () => {
    const w = world(three(), [node('n0')]);
    const { written, actions } = rollOut(w, nodeAnnotations.waiting('third'));
    expect(written).toEqual(['HigherPrioritySkyhook: first, second', null]);
    expect(actions.filter((a) => a.kind === 'event' && a.reason === 'HigherPrioritySkyhook')).toEqual([]);
    // The rollout still completes, in priority order.
    const state = nodeNamed(w, 'n0').annotations;
    for (const name of ['first', 'second', 'third'])
      expect(state[nodeAnnotations.nodeState(name)]).toContain('complete');
  });

  it('names the SCRs holding the node while it waits', () => {
    const w = world(three(), [node('n0')]);
    applyActions(w, plan(w).actions);
    const annotations = nodeNamed(w, 'n0').annotations;
    expect(annotations[nodeAnnotations.waiting('second')]).toBe('HigherPrioritySkyhook: first');
    expect(annotations[nodeAnnotations.waiting('third')]).toBe('HigherPrioritySkyhook: first, second');
  });

  it('is rewritten when an SCR it does not name starts holding the node', () => {
    const w = world(three().slice(1), [node('n0')]);
    applyActions(w, plan(w).actions);
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('third')]).toBe('HigherPrioritySkyhook: second');
    w.skyhooks = [scr('zero', { priority: 0, packages: { z: pkg('1.0.0') } }), ...w.skyhooks];
    applyActions(w, plan(w).actions);
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('third')]).toBe(
      'HigherPrioritySkyhook: zero, second',
    );
  });
});
