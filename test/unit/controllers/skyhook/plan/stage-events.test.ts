/**
 * The Events a rollout records on its nodes (issue 18: each Event is an API write): a stage's success
 * is said once, in the Event of the node's completion; a failed stage is always a Warning on the node.
 */
import { describe, expect, it } from '@jest/globals';
import type { PlannerAction, PlannerEvent } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { applyActions, finishOps, node, pkg, plan, scr, world, type World } from './world.js';

const SHELLSCRIPT = 'ghcr.io/nvidia/skyhook-packages/shellscript';

const nodeEvents = (actions: PlannerAction[]): PlannerEvent[] =>
  actions.filter((a): a is PlannerEvent => a.kind === 'event' && a.involved.kind === 'Node');

/** Plans and applies until quiet, finishing running ops as `finish` says; returns every Event on a node. */
function roll(w: World, finish: (w: World) => void = (x) => finishOps(x)): PlannerEvent[] {
  const events: PlannerEvent[] = [];
  for (let round = 0; round < 40; round++) {
    const { actions } = plan(w);
    applyActions(w, actions);
    events.push(...nodeEvents(actions));
    if (!w.ops.some((op) => op.phase === 'Running') && !actions.some((a) => a.kind !== 'event')) break;
    finish(w);
    w.now += 1_000;
  }
  return events;
}

describe('stage Events on the node', () => {
  it('two stages on two nodes: one Normal State Event per node, naming the last stage and the completion', () => {
    const w = world(
      [scr('demo', { packages: { tuning: pkg('1.0.0', { image: SHELLSCRIPT, configMap: { 'a.sh': 'x' } }) } })],
      [node('n1', 1), node('n2', 2)],
    );
    const events = roll(w);
    expect(w.created.map((op) => `${op.node}:${op.stage}`).sort()).toEqual([
      'n1:apply',
      'n1:config',
      'n2:apply',
      'n2:config',
    ]);
    expect(events.map((e) => `${e.involved.name} ${e.type} ${e.reason}: ${e.message}`).sort()).toEqual([
      'n1 Normal State: Package [tuning:1.0.0] state complete on [skyhook:demo] stage [config]. Skyhook [demo] complete.',
      'n2 Normal State: Package [tuning:1.0.0] state complete on [skyhook:demo] stage [config]. Skyhook [demo] complete.',
    ]);
  });

  it('a failed stage is a Warning State Event on the node', () => {
    const w = world([scr('demo', { packages: { tuning: pkg('1.0.0', { image: SHELLSCRIPT }) } })], [node('n1', 1)]);
    const events = roll(w, (x) => finishOps(x, 'Failed'));
    const warnings = events.filter((e) => e.type === 'Warning' && e.reason === 'State');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(
      /^Package \[tuning:1\.0\.0\] state erroring on \[skyhook:demo\] stage \[apply\]/,
    );
  });
});
