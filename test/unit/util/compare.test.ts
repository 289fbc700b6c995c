import { describe, expect, it } from '@jest/globals';
import { compareText } from '../../../src/util/compare.js';

describe('compareText', () => {
  it('orders by code unit, as Go and kubectl do: upper case before lower, digits before letters', () => {
    const names = ['node-a', 'node-B', 'node-10', 'node-2', 'Node-z', 'node_a'];
    expect([...names].sort(compareText)).toEqual(['Node-z', 'node-10', 'node-2', 'node-B', 'node-a', 'node_a']);
  });

  it('is a total order: equal names compare 0, and swapping the arguments flips the sign', () => {
    expect(compareText('worker-1', 'worker-1')).toBe(0);
    expect(compareText('a', 'b')).toBe(-1);
    expect(compareText('b', 'a')).toBe(1);
  });
});
