import { describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import { nodeAnnotations } from '../../../../../src/api/names.js';
import { EVERY_SKYHOOK, nodeUpdateWakes } from '../../../../../src/controllers/skyhook/views/node-wakes.js';
import { scr } from '../plan/world.js';

const scrs = () => [scr('s3', { priority: 3 }), scr('s1', { priority: 1 }), scr('s2', { priority: 2 })];

function v1(
  annotations: Record<string, string>,
  labels: Record<string, string> = {},
  extra: Partial<V1Node> = {},
): V1Node {
  return { metadata: { name: 'n0', annotations, labels }, spec: {}, ...extra };
}

describe('nodeUpdateWakes', () => {
  it('wakes only the SCR itself for its own node state while its completion there does not change', () => {
    const old = v1({});
    const node = v1({ [nodeAnnotations.nodeState('s2')]: '{}' }, { [nodeAnnotations.status('s2')]: 'in_progress' });
    expect(nodeUpdateWakes(node, old, scrs())).toEqual(['s2']);
  });

  it('wakes an SCR and the SCRs after it when it turns complete on the node, or stops being complete', () => {
    const running = v1(
      { [nodeAnnotations.status('s2')]: 'in_progress' },
      { [nodeAnnotations.status('s2')]: 'in_progress' },
    );
    const done = v1({ [nodeAnnotations.status('s2')]: 'complete' }, { [nodeAnnotations.status('s2')]: 'complete' });
    expect(new Set(nodeUpdateWakes(done, running, scrs()))).toEqual(new Set(['s2', 's3']));
    expect(new Set(nodeUpdateWakes(running, done, scrs()))).toEqual(new Set(['s2', 's3']));
  });

  it('wakes only the SCR itself for its waiting annotation', () => {
    expect(nodeUpdateWakes(v1({ [nodeAnnotations.waiting('s1')]: 'RolloutBudget: x' }), v1({}), scrs())).toEqual([
      's1',
    ]);
  });

  it('wakes from the earliest SCR whose completion changed', () => {
    const node = v1({ [nodeAnnotations.waiting('s3')]: 'x', [nodeAnnotations.recordedOps('s1')]: 'u' });
    expect(new Set(nodeUpdateWakes(node, v1({}), scrs()))).toEqual(new Set(['s1', 's3']));
    const completed = v1({ [nodeAnnotations.recordedOps('s1')]: 'u' }, { [nodeAnnotations.status('s1')]: 'complete' });
    expect(new Set(nodeUpdateWakes(completed, v1({}), scrs()))).toEqual(new Set(['s1', 's2', 's3']));
  });

  it('wakes every SCR for anything not one SCR’s own', () => {
    const base = v1({});
    expect(nodeUpdateWakes(v1({}, { team: 'a' }), base, scrs())).toBe(EVERY_SKYHOOK);
    expect(nodeUpdateWakes(v1({ other: 'x' }), base, scrs())).toBe(EVERY_SKYHOOK);
    expect(nodeUpdateWakes(v1({ [nodeAnnotations.cordon('s1')]: 'true' }), base, scrs())).toBe(EVERY_SKYHOOK);
    // A key of an SCR that does not exist (deleted, or not yet in the cache).
    expect(nodeUpdateWakes(v1({ [nodeAnnotations.nodeState('gone')]: '{}' }), base, scrs())).toBe(EVERY_SKYHOOK);
    expect(nodeUpdateWakes(v1({}, {}, { spec: { unschedulable: true } }), base, scrs())).toBe(EVERY_SKYHOOK);
    expect(nodeUpdateWakes(v1({}, {}, { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }), base, scrs())).toBe(
      EVERY_SKYHOOK,
    );
  });

  it('wakes every SCR when one is runtime-required (the taint goes when all of its SCRs are complete)', () => {
    const withRequired = [...scrs(), scr('late', { priority: 9, runtimeRequired: true })];
    expect(nodeUpdateWakes(v1({ [nodeAnnotations.nodeState('s3')]: '{}' }), v1({}), withRequired)).toBe(EVERY_SKYHOOK);
  });
});
