/**
 * When a NodeOp reconcile writes the status (issue 18: fewer writes): a Quiet NodeOp's routine
 * "Job created" entry is held back for RUNNING_WRITE_DELAY_MS, so a short Job costs one write (its
 * outcome) instead of two; everything else is written as before, and a held entry is read back.
 */
import { describe, expect, it } from '@jest/globals';
import type { NodeOp, NodeOpNodeStatus, NodeOpStatus } from '../../../../src/api/nodeop.js';
import type { PacingDecision } from '../../../../src/controllers/nodeop/pacing.js';
import {
  HeldEntries,
  planStatusWrite,
  RUNNING_WRITE_DELAY_MS,
} from '../../../../src/controllers/nodeop/status-write.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();

function nodeOp(quiet: boolean, status?: NodeOpStatus, uid = 'u1'): NodeOp {
  return {
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'NodeOp',
    metadata: { name: 'op', namespace: 'skyhook', uid, generation: 1 },
    spec: { image: 'x', targetNodes: ['n1'], ...(quiet ? { eventVerbosity: 'Quiet' } : {}) },
    ...(status ? { status } : {}),
  } as NodeOp;
}

const running: NodeOpNodeStatus = {
  phase: 'Running',
  jobName: 'op-n1',
  message: 'Job op-n1 created',
  rebootStatus: 'not-requested',
  startedAt: iso(T0),
  lastUpdated: iso(T0),
};
const completed: NodeOpNodeStatus = {
  ...running,
  phase: 'Completed',
  message: 'Job op-n1 completed',
  lastUpdated: iso(T0 + 5_000),
};
const pacing: PacingDecision = { start: [], inFlight: 1, waiting: [] };
const plan = (op: NodeOp, statuses: Record<string, NodeOpNodeStatus>, now: number) =>
  planStatusWrite({ nodeOp: op, targets: ['n1'], pacing, statuses, now });

describe('planStatusWrite', () => {
  it('Quiet: the new Running entry is held back, nothing is written, and it is due after the delay', () => {
    const write = plan(nodeOp(true), { n1: running }, T0);
    expect(write.patch).toBeUndefined();
    expect(write.held).toEqual({ n1: running });
    expect(write.writeAt).toBe(T0 + RUNNING_WRITE_DELAY_MS);
  });

  it('Quiet, short Job: one write in all, the outcome straight from no status to Completed', () => {
    const write = plan(nodeOp(true), { n1: completed }, T0 + 5_000);
    expect(write.held).toEqual({});
    expect(write.patch).toEqual({
      phase: 'Completed',
      conditions: [],
      nodeStatuses: { n1: completed },
      observedGeneration: 1,
      lastUpdated: iso(T0 + 5_000),
    });
  });

  it('Quiet, long Job: the Running entry is written once the delay has passed', () => {
    const write = plan(nodeOp(true), { n1: running }, T0 + RUNNING_WRITE_DELAY_MS);
    expect(write.held).toEqual({});
    expect(write.patch?.phase).toBe('Running');
    expect(write.patch?.nodeStatuses).toEqual({ n1: running });
  });

  it('not Quiet (people’s own NodeOps): written at once, as before', () => {
    const write = plan(nodeOp(false), { n1: running }, T0);
    expect(write.held).toEqual({});
    expect(write.patch).toMatchObject({ phase: 'Running', nodeStatuses: { n1: running } });
  });

  it('Quiet: restarts, a message that is not routine, an entry already written: written at once', () => {
    for (const entry of [
      { ...running, restarts: 1 },
      { ...running, message: 'Job op-n1 is running (pod p: ImagePullBackOff)' },
    ])
      expect(plan(nodeOp(true), { n1: entry }, T0).patch?.nodeStatuses).toEqual({ n1: entry });
    const pending: NodeOpNodeStatus = { ...running, phase: 'Pending', message: 'starting' };
    const written = nodeOp(true, { phase: 'Running', nodeStatuses: { n1: pending }, observedGeneration: 1 });
    expect(plan(written, { n1: running }, T0).patch?.nodeStatuses).toEqual({ n1: running });
  });

  it('writes nothing when nothing changed, only changed entries otherwise', () => {
    const other: NodeOpNodeStatus = { ...completed, jobName: 'op-n2' };
    const status: NodeOpStatus = {
      phase: 'Running',
      conditions: [],
      nodeStatuses: { n1: running, n2: other },
      observedGeneration: 1,
    };
    const op = nodeOp(false, status);
    const targets = ['n1', 'n2'];
    expect(planStatusWrite({ nodeOp: op, targets, pacing, statuses: { n1: running, n2: other }, now: T0 }).patch).toBe(
      undefined,
    );
    const write = planStatusWrite({ nodeOp: op, targets, pacing, statuses: { n1: completed, n2: other }, now: T0 });
    expect(write.patch?.nodeStatuses).toEqual({ n1: completed });
    expect(write.patch?.phase).toBe('Completed');
  });
});

describe('HeldEntries', () => {
  it('reads held entries back into the next reconcile; a written entry wins; a NodeOp made again starts afresh', () => {
    const held = new HeldEntries();
    const op = nodeOp(true);
    held.remember('skyhook/op', op, { n1: running });
    expect(held.withHeld('skyhook/op', op)).toEqual({ n1: running });
    expect(held.withHeld('skyhook/op', nodeOp(true, { nodeStatuses: { n1: completed } }))).toEqual({ n1: completed });
    expect(held.withHeld('skyhook/op', nodeOp(true, undefined, 'u2'))).toEqual({});
    held.remember('skyhook/op', op, {});
    expect(held.withHeld('skyhook/op', op)).toEqual({});
    held.remember('skyhook/op', op, { n1: running });
    held.forget('skyhook/op');
    expect(held.withHeld('skyhook/op', op)).toEqual({});
  });
});
