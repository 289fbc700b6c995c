import { describe, expect, it } from '@jest/globals';
import { waitForValue } from '../../e2e/eventually.js';

describe('waitForValue', () => {
  it('returns the first value the probe gives', async () => {
    let calls = 0;
    const value = await waitForValue('the third call', async () => (++calls === 3 ? 'found' : undefined), {
      timeoutMs: 1_000,
      intervalMs: 1,
    });
    expect(value).toBe('found');
  });

  it('says on a timeout what it waited for and, when told how, what was there instead', async () => {
    const never = async (): Promise<string | undefined> => undefined;
    await expect(waitForValue('the alert hold', never, { timeoutMs: 20, intervalMs: 5 })).rejects.toThrow(
      /^timed out after 20 ms waiting for the alert hold$/,
    );
    await expect(
      waitForValue('the alert hold', never, {
        timeoutMs: 20,
        intervalMs: 5,
        describe: async () => 'queue entry {"reason":"BlockingPods"}',
      }),
    ).rejects.toThrow(
      'timed out after 20 ms waiting for the alert hold; instead: queue entry {"reason":"BlockingPods"}',
    );
    await expect(
      waitForValue('the alert hold', never, {
        timeoutMs: 20,
        intervalMs: 5,
        describe: async () => {
          throw new Error('API server gone');
        },
      }),
    ).rejects.toThrow('; instead: (could not tell: Error: API server gone)');
  });
});
