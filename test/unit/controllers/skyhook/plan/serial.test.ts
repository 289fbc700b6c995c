/** spec.serial: one package started per node per pass (nodewright's fixed semantics); without it, every ready package at once. */
import { describe, expect, it } from '@jest/globals';
import { node, pkg, plan, scr, world } from './world.js';

const creates = (serial: boolean): string[][] => {
  const w = world(
    [scr('s', { serial, packages: { a: pkg('1.0.0'), b: pkg('1.0.0') } })],
    [node('n0', 0), node('n1', 1)],
  );
  const actions = plan(w).actions.filter((a) => a.kind === 'createStageOp');
  return ['n0', 'n1'].map((n) =>
    actions.flatMap((a) => (a.kind === 'createStageOp' && a.node === n ? [a.package.name] : [])).sort(),
  );
};

describe('spec.serial', () => {
  it('starts one package per node per pass', () => {
    expect(creates(true).map((packages) => packages.length)).toEqual([1, 1]);
  });

  it('starts every independent package of a node at once without it', () => {
    expect(creates(false)).toEqual([
      ['a', 'b'],
      ['a', 'b'],
    ]);
  });
});
