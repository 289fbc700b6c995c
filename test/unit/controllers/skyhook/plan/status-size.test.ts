/**
 * A Skyhook whose per-node status maps would take it past etcd's request limit lists less
 * (status-size.ts): the pure fitting, then the planner's status on a rollout whose object is made
 * large up front (by an annotation standing in for a large spec: the budget counts metadata and spec
 * alike), so a few nodes cross it: the status stays the same from pass to pass (nothing is rewritten), says what it left
 * out, and the plan still hands the whole package states to the metrics.
 */
import { describe, expect, it } from '@jest/globals';
import { syntheticNodeMaps } from '../../../../../bench/synthetic-status.js';
import { planNextActions } from '../../../../../src/controllers/skyhook/plan/planner.js';
import {
  fitNodeMaps,
  OBJECT_BYTES_BUDGET,
  objectBytesWithoutStatus,
  trimMessage,
} from '../../../../../src/controllers/skyhook/plan/status-size.js';
import { node, pkg, plan, plannerInput, runToQuiet, scr, world } from './world.js';

const maps = syntheticNodeMaps;

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

describe('fitting the per-node maps', () => {
  it('keeps every map whole, as the same objects, when they fit', () => {
    const whole = maps(100, 50);
    const fitted = fitNodeMaps(whole, 10_000);
    expect(fitted.trim).toBeUndefined();
    expect(fitted.maps).toBe(whole);
  });

  it('first leaves out the complete nodes of nodeState, and no more than needed', () => {
    const whole = maps(8_000, 6_000);
    const full = bytes(whole);
    // Room for everything but about half of nodeState.
    const fitted = fitNodeMaps(whole, 0, full + 64 * 1024 - bytes(whole.nodeState) / 2);
    expect(Object.keys(fitted.maps.nodeState)).toHaveLength(2_000);
    expect(Object.values(fitted.maps.nodeState).every((e) => e['pkg|1.0.0']?.state === 'in_progress')).toBe(true);
    expect(fitted.maps.nodeStatus).toBe(whole.nodeStatus);
    expect(Object.keys(fitted.maps.nodePriority)).toHaveLength(8_000);
    expect(fitted.trim).toMatchObject({ nodeStateListed: 2_000, nodeStateOf: 8_000, nodePriorityListed: 8_000 });
  });

  it('then cuts nodePriority to the nodes not complete, then drops nodeState, then nodePriority', () => {
    const whole = maps(8_000, 6_000);
    const notComplete = <V>(map: Record<string, V>): Record<string, V> =>
      Object.fromEntries(Object.entries(map).filter(([name]) => whole.nodeStatus[name] !== 'complete'));
    const statusOnly = bytes(whole.nodeStatus) + 64 * 1024;
    const cut = (budget: number) => fitNodeMaps(whole, 0, budget);
    // (+10: the estimate counts a comma after each entry, JSON one fewer.)
    const priorityCut = cut(
      statusOnly + bytes(notComplete(whole.nodeState)) + bytes(notComplete(whole.nodePriority)) + 10,
    );
    expect(Object.keys(priorityCut.maps.nodeState)).toHaveLength(2_000);
    expect(Object.keys(priorityCut.maps.nodePriority)).toHaveLength(2_000);
    const noState = cut(statusOnly + 2 + bytes(notComplete(whole.nodePriority)) + 10);
    expect(noState.maps.nodeState).toEqual({});
    expect(Object.keys(noState.maps.nodePriority)).toHaveLength(2_000);
    const nothing = cut(statusOnly + 10);
    expect(nothing.maps).toEqual({ nodeState: {}, nodeStatus: whole.nodeStatus, nodePriority: {} });
    expect(nothing.trim).toMatchObject({ nodeStateListed: 0, nodePriorityListed: 0 });
  });

  it('counts the rest of the object against the same budget', () => {
    const whole = maps(100, 100);
    expect(fitNodeMaps(whole, 0).trim).toBeUndefined();
    expect(fitNodeMaps(whole, OBJECT_BYTES_BUDGET).trim).toBeDefined();
  });

  it('says what was left out, why, and where every node state is', () => {
    const { trim } = fitNodeMaps(maps(8_000, 6_000), 0, 1_000_000);
    expect(trimMessage(trim!, 'gpu')).toMatch(
      /^status\.nodeState lists 2000 of 8000 nodes \(complete nodes first left out\): whole, the Skyhook would take 1\.76 MB, over the 1\.00 MB kept below etcd's 1\.5 MiB request limit; .*skyhook\.nvidia\.com\/nodeState_gpu/,
    );
  });
});

describe('a Skyhook that would outgrow etcd', () => {
  // 3 nodes need far less than the budget; an object this large leaves them no room, so the cut is
  // seen at this size (the API server caps annotations at 256 KiB: this one stands in for a spec).
  const big = (): ReturnType<typeof world> => {
    const filler = 'x'.repeat(OBJECT_BYTES_BUDGET - 64 * 1024 - 300);
    const w = world(
      [scr('big', { packages: { pkg: pkg('1.0.0') } }, { 'example.com/filler': filler })],
      [node('n1', 1), node('n2', 2), node('n3', 3)],
    );
    return w;
  };

  it('writes a status without the complete nodes in nodeState, says so, and does not rewrite it', () => {
    const w = big();
    expect(objectBytesWithoutStatus(w.skyhooks[0]!)).toBeGreaterThan(OBJECT_BYTES_BUDGET - 65 * 1024);
    runToQuiet(w);
    const status = w.skyhooks[0]!.status!;
    expect(status).toMatchObject({ status: 'complete', completeNodes: '3/3' });
    expect(Object.keys(status.nodeStatus ?? {})).toEqual(['n1', 'n2', 'n3']);
    expect(status.nodeState).toEqual({});
    const trimmed = status.conditions?.find((c) => c.type === 'StatusTrimmed');
    expect(trimmed).toMatchObject({ status: 'True', reason: 'ObjectSizeLimit' });
    expect(trimmed?.message).toMatch(/^status\.nodeState lists 0 of 3 nodes/);
    expect(plan(w).actions.filter((a) => a.kind !== 'event')).toEqual([]);
  });

  it('hands the metrics every node package state however much the status lists', () => {
    const w = big();
    runToQuiet(w);
    const result = planNextActions({ ...plannerInput(w), only: 'big' });
    expect(Object.keys(result.nodeState ?? {}).sort()).toEqual(['n1', 'n2', 'n3']);
    expect(result.nodeState?.['n1']?.['pkg|1.0.0']).toMatchObject({ state: 'complete' });
  });

  it('lists every node again, and drops the condition, once the object has room', () => {
    const w = big();
    runToQuiet(w);
    const skyhook = w.skyhooks[0]!;
    w.skyhooks = [{ ...skyhook, metadata: { ...skyhook.metadata, annotations: {} } }];
    runToQuiet(w);
    const status = w.skyhooks[0]!.status!;
    expect(Object.keys(status.nodeState ?? {}).sort()).toEqual(['n1', 'n2', 'n3']);
    expect(status.conditions?.find((c) => c.type === 'StatusTrimmed')).toBeUndefined();
  });
});
