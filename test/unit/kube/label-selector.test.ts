import { describe, expect, it } from '@jest/globals';
import { selectorMatches } from '../../../src/api/label-selector.js';
import { parseLabelSelector } from '../../../src/kube/label-selector.js';

describe('parseLabelSelector (matched by selectorMatches)', () => {
  const labels = { app: 'x', tier: 'node' };
  const matches = (text: string, have: Record<string, string> = labels): boolean | undefined => {
    const selector = parseLabelSelector(text);
    return selector === undefined ? undefined : selectorMatches(selector, have);
  };
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
    expect(matches(selector)).toBe(expected);
  });

  it('does not read a set-based term', () => {
    expect(parseLabelSelector('app in (x,y)')).toBeUndefined();
    expect(parseLabelSelector('app notin (z)')).toBeUndefined();
  });

  it('treats missing labels as none', () => {
    expect(matches('!app', {})).toBe(true);
    expect(matches('app', {})).toBe(false);
  });
});
