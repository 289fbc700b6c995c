import { describe, expect, it } from '@jest/globals';
import { matchesLabelSelector } from '../../../src/kube/label-selector.js';

describe('matchesLabelSelector', () => {
  const labels = { app: 'x', tier: 'node' };
  it.each([
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['app=x', true],
    ['app==x', true],
    ['app=y', false],
    ['app!=y', true],
    ['app!=x', false],
    ['missing!=y', true],
    ['app=x,tier=node', true],
    ['app=x, tier=edge', false],
    ['', true],
  ])('%s → %s', (selector, expected) => {
    expect(matchesLabelSelector(selector, labels)).toBe(expected);
  });

  it('never matches a set-based term it does not understand', () => {
    expect(matchesLabelSelector('app in (x,y)', labels)).toBe(false);
    expect(matchesLabelSelector('app notin (z)', labels)).toBe(false);
  });

  it('treats missing labels as none', () => {
    expect(matchesLabelSelector('!app', undefined)).toBe(true);
    expect(matchesLabelSelector('app', undefined)).toBe(false);
  });
});
