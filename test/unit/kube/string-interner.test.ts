/** The informer caches' string interning: same values, shared copies, bounded table. */
import { describe, expect, it } from '@jest/globals';
import { StringInterner } from '../../../src/kube/string-interner.js';

describe('StringInterner', () => {
  it('leaves every value as it was (deep), whatever it shares', () => {
    const interner = new StringInterner();
    const text = JSON.stringify({
      a: 'x'.repeat(40),
      list: ['y'.repeat(30), 1, null, { z: 'y'.repeat(30), t: true }],
      nested: { deeper: { s: 'x'.repeat(40) } },
    });
    const first = interner.internAll(JSON.parse(text) as unknown);
    const second = interner.internAll(JSON.parse(text) as unknown);
    expect(first).toEqual(JSON.parse(text));
    expect(second).toEqual(first);
    expect(interner.size).toBe(2);
  });

  it('skips strings over the length limit and frozen objects', () => {
    const interner = new StringInterner(10, 8);
    const frozen = Object.freeze({ s: 'abc' });
    expect(interner.internAll({ long: '123456789', frozen })).toEqual({ long: '123456789', frozen: { s: 'abc' } });
    expect(interner.size).toBe(0);
  });

  it('starts over once the table is full, so never-repeated strings cannot grow it', () => {
    const interner = new StringInterner(3);
    for (let i = 0; i < 10; i++) interner.intern(`resourceVersion-${i}`);
    expect(interner.size).toBeLessThanOrEqual(3);
    expect(interner.intern('again')).toBe('again');
  });

  it('does not enter resourceVersions, which no two objects share', () => {
    const interner = new StringInterner();
    const object = interner.internAll({ metadata: { name: 'node-1', resourceVersion: '12345' } });
    expect(object).toEqual({ metadata: { name: 'node-1', resourceVersion: '12345' } });
    expect(interner.size).toBe(1);
  });
});
