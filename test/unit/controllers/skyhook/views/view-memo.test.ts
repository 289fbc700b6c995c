/**
 * The reconciler's views keep their identity while what the planner reads is unchanged, so
 * incremental planning (plan/plan-cache.ts) reuses a node's results across informer updates that
 * change nothing it reads (a status heartbeat), and recomputes them when something it reads changed.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import type { NodeOp } from '../../../../../src/api/nodeop.js';
import type { Skyhook } from '../../../../../src/api/skyhook.js';
import { NodeViewMemo } from '../../../../../src/controllers/skyhook/views/node-view.js';
import { opChangeMatters, StageOpSummaryMemo } from '../../../../../src/controllers/skyhook/views/op-summary.js';

const v1Node = (annotations: Record<string, string>, heartbeat = '1'): V1Node => ({
  metadata: { name: 'n0', creationTimestamp: new Date(1_000), labels: { a: 'b' }, annotations },
  spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] },
  status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date(Number(heartbeat)) }] },
});

const skyhook: Skyhook = {
  apiVersion: 'skyhook.nvidia.com/v1alpha1',
  kind: 'Skyhook',
  metadata: { name: 's', uid: 'u', generation: 1 },
  spec: { packages: { aa: { version: '1.0.0', image: 'img' } } },
};

const nodeOp = (phase: 'Running' | 'Completed', lastUpdated = '2026-01-01T00:00:00Z'): NodeOp =>
  ({
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'NodeOp',
    metadata: { name: 'op', namespace: 'ns', uid: 'op-uid' },
    spec: {
      targetNodes: ['n0'],
      skyhookStage: { skyhook: 's', stage: 'apply', package: { name: 'aa', version: '1.0.0', image: 'img' } },
    },
    status: { phase, lastUpdated },
  }) as unknown as NodeOp;

describe('NodeViewMemo', () => {
  it('keeps a view for the same object and across updates that change nothing the planner reads', () => {
    const memo = new NodeViewMemo();
    const first = memo.viewsOf([v1Node({ x: '1' })])[0];
    expect(memo.viewsOf([v1Node({ x: '1' }, '2')])[0]).toBe(first);
    const changed = memo.viewsOf([v1Node({ x: '2' })])[0];
    expect(changed).not.toBe(first);
    expect(changed?.annotations).toEqual({ x: '2' });
  });

  it('keeps a view with pods while the pods are the same', () => {
    const memo = new NodeViewMemo();
    const node = v1Node({});
    const pods = [{ namespace: 'd', name: 'p', labels: {}, phase: 'Running' }];
    const first = memo.viewsWithPods([node], () => pods)[0];
    expect(memo.viewsWithPods([node], () => [...pods])[0]).toBe(first);
    expect(memo.viewsWithPods([node], () => [])[0]).not.toBe(first);
  });
});

describe('StageOpSummaryMemo', () => {
  it('keeps a summary across updates that change nothing it reads, not across a phase change', () => {
    const memo = new StageOpSummaryMemo();
    const [first] = memo.of([nodeOp('Running')], [skyhook], 'ns');
    expect(memo.of([nodeOp('Running', '2026-01-01T00:01:00Z')], [skyhook], 'ns')[0]).toBe(first);
    const [done] = memo.of([nodeOp('Completed')], [skyhook], 'ns');
    expect(done).not.toBe(first);
    expect(done?.phase).toBe('Completed');
  });
});

describe('StageOpSummaryMemo.current', () => {
  /** A stand-in informer: its handlers fire as the real one's do, after the list has changed. */
  function followed() {
    let ops = [nodeOp('Running')];
    const handlers: { update(): void }[] = [];
    const memo = new StageOpSummaryMemo().follow({ on: (h) => handlers.push(h) });
    let lists = 0;
    const list = () => {
      lists++;
      return ops;
    };
    const change = (next: NodeOp[]) => {
      ops = next;
      for (const h of handlers) h.update();
    };
    return { memo, list, change, lists: () => lists };
  }

  it('reuses the last summaries while no NodeOp event came and the SCRs are the same', () => {
    const { memo, list, lists } = followed();
    const first = memo.current(list, [skyhook], 'ns');
    expect(memo.current(list, [skyhook], 'ns')).toBe(first);
    expect(lists()).toBe(1);
  });

  it('reads the list again after a NodeOp event', () => {
    const { memo, list, change } = followed();
    memo.current(list, [skyhook], 'ns');
    change([nodeOp('Completed')]);
    expect(memo.current(list, [skyhook], 'ns')[0]?.phase).toBe('Completed');
  });

  it('summarises again when an SCR changes (its spec decides whether an op is stale)', () => {
    const { memo, list } = followed();
    const first = memo.current(list, [skyhook], 'ns');
    const edited = { ...skyhook, metadata: { ...skyhook.metadata, generation: 2 } };
    expect(memo.current(list, [edited], 'ns')).not.toBe(first);
    expect(memo.current(list, [], 'ns')).not.toBe(first);
  });
});

describe('opChangeMatters', () => {
  it('is false for a write that changes nothing the planner reads (a finalizer), true for a phase change', () => {
    const running = nodeOp('Running');
    const finalized = { ...running, metadata: { ...running.metadata, finalizers: ['x'], resourceVersion: '2' } };
    expect(opChangeMatters(finalized, running, skyhook)).toBe(false);
    expect(opChangeMatters(nodeOp('Completed'), running, skyhook)).toBe(true);
    const deleting = { ...running, metadata: { ...running.metadata, deletionTimestamp: new Date(5) } };
    expect(opChangeMatters(deleting, running, skyhook)).toBe(true);
  });
});
