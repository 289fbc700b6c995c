import { describe, it, expect } from '@jest/globals';
import { retryWhileBusy } from '../../../src/kube/busy-retry.js';

describe('retryWhileBusy', () => {
  it('retries 429 answers and returns the first success', async () => {
    let calls = 0;
    const result = await retryWhileBusy(
      async () => {
        calls += 1;
        if (calls < 3) throw Object.assign(new Error('busy'), { code: 429 });
        return 'ok';
      },
      5,
      1,
    );
    expect([result, calls]).toEqual(['ok', 3]);
  });

  it('gives up after the attempts, and never retries other errors', async () => {
    let calls = 0;
    await expect(
      retryWhileBusy(
        async () => {
          calls += 1;
          throw Object.assign(new Error('busy'), { code: 429 });
        },
        2,
        1,
      ),
    ).rejects.toThrow('busy');
    expect(calls).toBe(2);
    calls = 0;
    await expect(
      retryWhileBusy(
        async () => {
          calls += 1;
          throw Object.assign(new Error('gone'), { code: 404 });
        },
        5,
        1,
      ),
    ).rejects.toThrow('gone');
    expect(calls).toBe(1);
  });
});
