/** SKYHOOK_WRITE_CONCURRENCY: 32 by default, a whole number of at least 1, refused otherwise. */
import { describe, expect, it } from '@jest/globals';
import { readSkyhookSettings } from '../../../../src/controllers/skyhook/skyhook-settings.js';

describe('SKYHOOK_WRITE_CONCURRENCY', () => {
  it('defaults to 32 and reads a whole number', () => {
    expect(readSkyhookSettings({}, 'skyhook').writeConcurrency).toBe(32);
    expect(readSkyhookSettings({ SKYHOOK_WRITE_CONCURRENCY: '1' }, 'skyhook').writeConcurrency).toBe(1);
    expect(readSkyhookSettings({ SKYHOOK_WRITE_CONCURRENCY: '64' }, 'skyhook').writeConcurrency).toBe(64);
  });

  it.each(['0', '-3', '2.5', 'many'])('refuses %s', (value) => {
    expect(() => readSkyhookSettings({ SKYHOOK_WRITE_CONCURRENCY: value }, 'skyhook')).toThrow(
      `SKYHOOK_WRITE_CONCURRENCY must be a whole number of at least 1, not '${value}'`,
    );
  });
});
