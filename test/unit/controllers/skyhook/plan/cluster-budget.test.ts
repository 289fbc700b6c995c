import { describe, expect, it } from '@jest/globals';
import { nodeAnnotations, RUNTIME_REQUIRED_CORDON_ANNOTATION } from '../../../../../src/api/names.js';
import type { PlannerAction, PlannerEvent } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { budget } from '../../disruption/budgets.js';
import { applyActions, node, nodeNamed, pkg, plan, runToQuiet, scr, world, type World } from './world.js';

const reboot = { packages: { k: pkg('1.0.0', { interrupt: { type: 'reboot' as const } }) } };
const plain = { packages: { p: pkg('1.0.0') } };

function twoRebootingSkyhooks(nodes: number, withBudget: boolean): World {
  const w = world(
    [
      scr('first', { ...reboot, interruptionBudget: { count: 1 } }),
      scr('second', { ...reboot, interruptionBudget: { count: 1 } }),
    ],
    Array.from({ length: nodes }, (_, i) => node(`n${i}`, i)),
  );
  if (withBudget) w.budgets = [budget('one', { maxDisrupted: { count: 1 } })];
  return w;
}

const cordoned = (w: World): string[] => w.nodes.filter((n) => n.unschedulable).map((n) => n.name);

describe('the cluster budget in the planner', () => {
  it('without a budget two SCRs each take a node down at once (today), and both complete', () => {
    const w = twoRebootingSkyhooks(4, false);
    let most = 0;
    runToQuiet(w, 200, () => {
      most = Math.max(most, cordoned(w).length);
    });
    expect(most).toBe(2);
    expect(w.skyhooks.map((s) => s.status?.status)).toEqual(['complete', 'complete']);
  });

  it('with a budget of 1 they take one node at a time; the waiting node says ClusterBudget and stays waiting', () => {
    const w = twoRebootingSkyhooks(4, true);
    let most = 0;
    const waits = new Set<string>();
    runToQuiet(w, 200, () => {
      most = Math.max(most, cordoned(w).length);
      for (const n of w.nodes) {
        for (const name of ['first', 'second']) {
          const waiting = n.annotations[nodeAnnotations.waiting(name)];
          if (!waiting?.startsWith('ClusterBudget: ')) continue;
          waits.add(`${name}: ${waiting.replace(/disrupted: n\d$/, 'disrupted: …')}`);
          expect(n.annotations[nodeAnnotations.status(name)]).not.toBe('in_progress');
        }
      }
    });
    expect(most).toBe(1);
    // The first SCR's next node waits while the second works on a node the first finished.
    expect([...waits]).toEqual([
      'first: ClusterBudget: DisruptionBudget one allows 1 of 4 node(s) disrupted at once; disrupted: …',
    ]);
    expect(w.skyhooks.map((s) => s.status?.status)).toEqual(['complete', 'complete']);
  });

  it('never holds an SCR without interrupts', () => {
    const w = world([scr('quiet', { ...plain, interruptionBudget: { count: 2 } })], [node('n0', 0), node('n1', 1)]);
    w.budgets = [budget('one', { maxDisrupted: { count: 1 } })];
    w.nodes[0]!.unschedulable = true;
    w.nodes[0]!.annotations[nodeAnnotations.cordon('other')] = 'true';
    applyActions(w, plan(w).actions);
    expect(w.creates.map((c) => c.node).sort()).toEqual(['n0', 'n1']);
  });

  it('counts joining a new node cordoned for runtimeRequired (not yet a disruption) as a new disruption', () => {
    const w = world([scr('s', { ...reboot, interruptionBudget: { count: 2 } })], [node('n0', 0), node('n1', 1)]);
    w.budgets = [budget('one', { maxDisrupted: { count: 1 } })];
    for (const n of w.nodes) {
      n.unschedulable = true;
      n.annotations[RUNTIME_REQUIRED_CORDON_ANNOTATION] = 'true';
    }
    applyActions(w, plan(w).actions);
    const claimed = w.nodes.filter((n) => n.annotations[nodeAnnotations.cordon('s')] === 'true').map((n) => n.name);
    expect(claimed).toEqual(['n0']);
    expect(nodeNamed(w, 'n1').annotations[nodeAnnotations.waiting('s')]).toMatch(/^ClusterBudget: /);
  });

  it('records an Event on the node when its wait for the cluster budget starts, once', () => {
    const w = world([scr('s', { ...reboot, interruptionBudget: { count: 2 } })], [node('n0', 0), node('n1', 1)]);
    w.budgets = [budget('one', { maxDisrupted: { count: 1 } })];
    w.nodes[1]!.unschedulable = true;
    w.nodes[1]!.annotations['skyhook.nvidia.com/cordoned-by'] = 'default/op@uid';
    const events = (actions: PlannerAction[]) =>
      actions.filter((a): a is PlannerEvent => a.kind === 'event' && a.reason === 'ClusterBudget');
    const first = plan(w).actions;
    expect(events(first)).toEqual([
      {
        kind: 'event',
        involved: { kind: 'Node', name: 'n0' },
        type: 'Normal',
        reason: 'ClusterBudget',
        message: 'Skyhook [s] waits: DisruptionBudget one allows 1 of 2 node(s) disrupted at once; disrupted: n1',
      },
    ]);
    applyActions(w, first);
    expect(events(plan(w).actions)).toEqual([]);
  });

  it('lets a node already disrupted by a NodeOp be interrupted without a slot', () => {
    const w = world([scr('s', { ...reboot, interruptionBudget: { count: 2 } })], [node('n0', 0), node('n1', 1)]);
    w.budgets = [budget('one', { maxDisrupted: { count: 1 } })];
    w.nodes[1]!.unschedulable = true;
    w.nodes[1]!.annotations['skyhook.nvidia.com/cordoned-by'] = 'default/op@uid';
    runToQuiet(w, 5);
    expect(nodeNamed(w, 'n0').annotations[nodeAnnotations.waiting('s')]).toMatch(/^ClusterBudget: /);
    expect(w.creates.some((c) => c.node === 'n1' && c.stage === 'interrupt')).toBe(true);
  });
});
