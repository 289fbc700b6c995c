/**
 * Waits that free their slot (plan/non-interrupt-wait.ts): a node whose interrupt non-interruptible
 * pods hold gives its budget slot (and its batch) to nodes that can proceed, is cordoned only when no
 * such node wants the slot, keeps the wait's start on the node, warns past podNonInterruptWarnAfter
 * without ever interrupting, and proceeds when its pods go.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { nodeAnnotations, POD_ANNOTATIONS } from '../../../../../src/api/names.js';
import type { SkyhookSpec } from '../../../../../src/api/skyhook.js';
import { isDisrupted } from '../../../../../src/jobs/cordon/claims.js';
import type { NodeView, PlannerAction, PodView } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { budgetCeiling } from '../../../../../src/controllers/skyhook/plan/rollout.js';
import { applyActions, finishOps, node, nodeNamed, pkg, plan, policy, scr, world, type World } from './world.js';

const reboot = { type: 'reboot' as const };
const KEEP = { dontmess: 'withme' };
const keeper = (name = 'train'): PodView => ({ namespace: 'default', name, labels: { ...KEEP }, phase: 'Running' });

const rebootScr = (spec: Partial<SkyhookSpec> = {}) =>
  scr('s', {
    packages: { kernel: pkg('1.0.0', { interrupt: reboot }) },
    podNonInterruptLabels: { matchLabels: KEEP },
    ...spec,
  });

function fourNodes(spec: Partial<SkyhookSpec> = {}): World {
  const w = world(
    [rebootScr({ interruptionBudget: { count: 2 }, ...spec })],
    [0, 1, 2, 3].map((i) => node(`n${i}`, i)),
  );
  for (const n of w.nodes) n.pods = [];
  nodeNamed(w, 'n0').pods = [keeper()];
  return w;
}

const status = (w: World, n: string): string | undefined => w.skyhooks[0]!.status?.nodeStatus?.[n];
const disrupted = (w: World): string[] => w.nodes.filter((n) => isDisrupted(n)).map((n) => n.name);
const waiting = (n: NodeView): string | undefined => n.annotations[nodeAnnotations.waiting('s')];
const since = (n: NodeView): string | undefined => n.annotations[nodeAnnotations.nonInterruptWaitSince('s')];

/** One round: plan, apply, check, finish every op, one second on. */
function round(w: World, check?: (actions: PlannerAction[]) => void): PlannerAction[] {
  const result = plan(w);
  applyActions(w, result.actions);
  check?.(result.actions);
  finishOps(w);
  w.now += 1_000;
  return result.actions;
}

describe('a node held by non-interruptible pods', () => {
  it('gives its slot to the nodes that can proceed; they complete, it waits uncordoned until the slot is free', () => {
    const w = fourNodes();
    const start = w.now;
    const n0 = nodeNamed(w, 'n0');
    let otherDone = -1;
    for (let i = 0; i < 40; i++) {
      round(w);
      expect(disrupted(w).length).toBeLessThanOrEqual(2);
      if (otherDone < 0 && ['n1', 'n2', 'n3'].every((n) => status(w, n) === 'complete')) otherDone = i;
      // Uncordoned while another node wants a slot.
      if (otherDone < 0 && ['n1', 'n2', 'n3'].filter((n) => status(w, n) !== 'complete').length >= 2)
        expect(n0.unschedulable).not.toBe(true);
    }
    expect(otherDone).toBeGreaterThanOrEqual(0);
    expect(w.created.filter((op) => op.node === 'n0')).toEqual([]);
    expect(status(w, 'n0')).not.toBe('complete');
    expect(waiting(n0)).toBe('NonInterruptPodsRunning: default/train');
    // The wait started on the first pass and kept its start through the cordon (taken once the slot was free).
    expect(since(n0)).toBe(new Date(start).toISOString());
    expect(n0.unschedulable).toBe(true);
    expect(w.skyhooks[0]!.status?.conditions?.find((c) => c.type === 'Blocked')).toMatchObject({
      status: 'True',
      reason: 'NonInterruptPodsRunning',
    });

    n0.pods = [];
    for (let i = 0; i < 20 && status(w, 'n0') !== 'complete'; i++) round(w);
    expect(status(w, 'n0')).toBe('complete');
    expect(w.skyhooks[0]!.status?.status).toBe('complete');
    expect(since(n0)).toBeUndefined();
    expect(waiting(n0)).toBeUndefined();
    expect(n0.unschedulable).toBe(false);
  });

  it('holds every Skyhook when the pod opts in by annotation, with no podNonInterruptLabels', () => {
    const w = world(
      [scr('s', { packages: { kernel: pkg('1.0.0', { interrupt: reboot }) }, interruptionBudget: { count: 1 } })],
      [node('n0', 0), node('n1', 1)],
    );
    const n0 = nodeNamed(w, 'n0');
    // Without a barrier the reconciler gives only nodes with opted-in pods their pods.
    n0.pods = [{ ...keeper(), labels: {}, nonInterruptible: true }];
    round(w);
    expect(waiting(n0)).toBe('NonInterruptPodsRunning: default/train');
    expect(n0.unschedulable).not.toBe(true);
    expect(nodeNamed(w, 'n1').unschedulable).toBe(true);
    for (let i = 0; i < 10; i++) round(w);
    expect(status(w, 'n1')).toBe('complete');
    expect(w.created.filter((op) => op.node === 'n0')).toEqual([]);
    expect(POD_ANNOTATIONS.nonInterruptible).toBe('skyhook.nvidia.com/non-interruptible');
  });

  it('warns once past podNonInterruptWarnAfter, never interrupts, and keeps waiting', () => {
    const w = fourNodes({ podNonInterruptWarnAfter: '1h' });
    const n0 = nodeNamed(w, 'n0');
    const first = plan(w);
    expect(first.requeueAfterMs).toBeLessThanOrEqual(3_600_000);
    applyActions(w, first.actions);
    const started = since(n0);
    w.now += 3_600_000;
    const events: PlannerAction[] = [];
    for (let i = 0; i < 30; i++) round(w, (actions) => events.push(...actions.filter((a) => a.kind === 'event')));
    const warnings = events.filter((e) => e.kind === 'event' && e.reason === 'NonInterruptWaitLong');
    expect(warnings.map((e) => (e.kind === 'event' ? e.involved.kind : ''))).toEqual(['Node', 'Skyhook']);
    expect(waiting(n0)).toMatch(/^NonInterruptWaitLong: default\/train \(waiting since .*podNonInterruptWarnAfter 1h/);
    expect(since(n0)).toBe(started);
    expect(w.created.filter((op) => op.node === 'n0')).toEqual([]);
    const blocked = w.skyhooks[0]!.status?.conditions?.find((c) => c.type === 'Blocked');
    expect(blocked).toMatchObject({ status: 'True', reason: 'NonInterruptWaitLong' });
    expect(blocked?.message).toContain('waited longer than podNonInterruptWarnAfter (n0)');
  });

  it('does not keep a batch open: a fixed batch of 2 goes on without it', () => {
    const w = world(
      [rebootScr({ deploymentPolicy: 'p' })],
      [0, 1, 2, 3, 4].map((i) => node(`n${i}`, i)),
    );
    w.policies = [policy('p', { default: { budget: { count: 2 }, strategy: { fixed: { initialBatch: 2 } } } })];
    for (const n of w.nodes) n.pods = [];
    nodeNamed(w, 'n1').pods = [keeper()];
    for (let i = 0; i < 60; i++) {
      round(w);
      expect(disrupted(w).length).toBeLessThanOrEqual(2);
    }
    expect(['n0', 'n2', 'n3', 'n4'].map((n) => status(w, n))).toEqual(['complete', 'complete', 'complete', 'complete']);
    expect(w.created.filter((op) => op.node === 'n1')).toEqual([]);
    nodeNamed(w, 'n1').pods = [];
    for (let i = 0; i < 20; i++) round(w);
    expect(w.skyhooks[0]!.status?.status).toBe('complete');
  });
});

describe('non-interruptible waits, across random rollouts', () => {
  const scenario = fc.record({
    nodes: fc.integer({ min: 1, max: 7 }),
    count: fc.integer({ min: 1, max: 3 }),
    held: fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
    /** The round each held node's pods go (past the rounds: only after the others are done). */
    releases: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 7, maxLength: 7 }),
    policy: fc.boolean(),
  });

  it('never disrupts more than the budget, never interrupts a held node, frees the slot, and completes once pods go', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const nodes = Array.from({ length: s.nodes }, (_, i) => node(`n${i}`, i));
        const spec: Partial<SkyhookSpec> = s.policy
          ? { deploymentPolicy: 'p' }
          : { interruptionBudget: { count: s.count } };
        const w = world([rebootScr(spec)], nodes);
        if (s.policy)
          w.policies = [
            policy('p', { default: { budget: { count: s.count }, strategy: { fixed: { initialBatch: s.count } } } }),
          ];
        const held = new Set(nodes.filter((_, i) => s.held[i]).map((n) => n.name));
        for (const n of nodes) n.pods = held.has(n.name) ? [keeper(`keep-${n.name}`)] : [];
        const ceiling = budgetCeiling({ count: s.count }, s.nodes);
        const check = (): void => {
          expect(disrupted(w).length).toBeLessThanOrEqual(ceiling);
          for (const n of nodes)
            if ((n.pods ?? []).length > 0)
              expect(w.ops.filter((op) => op.node === n.name && op.phase === 'Running')).toEqual([]);
        };
        // The free nodes complete while every held node keeps its pods.
        for (let i = 0; i < 12 * s.nodes + 10; i++) round(w, check);
        for (const n of nodes) if (!held.has(n.name)) expect(status(w, n.name)).toBe('complete');
        // Pods go, in the order drawn; then every node completes.
        for (let i = 0; i <= 40; i++) {
          for (const n of nodes) if (s.releases[nodes.indexOf(n)] === i) n.pods = [];
          round(w, check);
        }
        for (const n of nodes) n.pods = [];
        for (let i = 0; i < 12 * s.nodes + 10; i++) round(w, check);
        expect(w.skyhooks[0]!.status?.status).toBe('complete');
        for (const n of nodes) {
          expect(since(n)).toBeUndefined();
          expect(n.unschedulable).toBe(false);
        }
      }),
      { numRuns: 40 },
    );
  });
});
