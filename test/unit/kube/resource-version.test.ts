/** Read-your-writes over informer caches: when a cache reflects a write of ours. */
import { describe, expect, it } from '@jest/globals';
import { isAtLeast, reflectsWrite } from '../../../src/kube/resource-version.js';

const at = (resourceVersion: string) => ({ metadata: { resourceVersion } });

describe('resourceVersions', () => {
  it('compares etcd revisions as numbers, anything else only as the same version', () => {
    expect(isAtLeast('10', '9')).toBe(true);
    expect(isAtLeast('9', '10')).toBe(false);
    expect(isAtLeast('abc', 'abc')).toBe(true);
    expect(isAtLeast('abd', 'abc')).toBe(false);
    expect(isAtLeast(undefined, '1')).toBe(false);
  });

  it('reflects a write when the cache shows its version or a later one', () => {
    expect(reflectsWrite(at('10'), undefined, '10')).toBe(true);
    expect(reflectsWrite(at('11'), '5', '10')).toBe(true);
    // Present but older: the informer's progress does not matter.
    expect(reflectsWrite(at('9'), '20', '10')).toBe(false);
  });

  it('reads an absent object as deleted since only once its informer got past the write', () => {
    expect(reflectsWrite(undefined, '10', '10')).toBe(true);
    expect(reflectsWrite(undefined, '9', '10')).toBe(false);
    expect(reflectsWrite(undefined, '', '10')).toBe(false);
    expect(reflectsWrite(undefined, undefined, '10')).toBe(false);
  });
});
