/**
 * The write idioms of kube/writes.ts: ignoreNotFound turns only a 404 into undefined, and
 * createOrReplace tries the write that usually succeeds first (create, or replace when the object
 * is known to exist) and falls back to the other on AlreadyExists or NotFound only.
 */
import { describe, expect, it } from '@jest/globals';
import { createOrReplace, ignoreNotFound } from '../../../src/kube/writes.js';

const apiError = (code: number, reason: string) =>
  Object.assign(new Error(`HTTP-Code: ${code}`), { code, body: JSON.stringify({ kind: 'Status', reason, code }) });

describe('ignoreNotFound', () => {
  it('passes the result through', async () => {
    await expect(ignoreNotFound(Promise.resolve('stored'))).resolves.toBe('stored');
  });
  it('resolves undefined on 404, from an ApiException or a watch error', async () => {
    await expect(ignoreNotFound(Promise.reject(apiError(404, 'NotFound')))).resolves.toBeUndefined();
    await expect(ignoreNotFound(Promise.reject(Object.assign(new Error('w'), { statusCode: 404 })))).resolves.toBe(
      undefined,
    );
  });
  it('throws every other error', async () => {
    const conflict = apiError(409, 'Conflict');
    await expect(ignoreNotFound(Promise.reject(conflict))).rejects.toBe(conflict);
    const network = new Error('ECONNRESET');
    await expect(ignoreNotFound(Promise.reject(network))).rejects.toBe(network);
  });
});

describe('createOrReplace', () => {
  /** A fake API: which writes were tried, each answering as scripted. */
  const scripted = (create: () => Promise<string>, replace: () => Promise<string>) => {
    const calls: string[] = [];
    return {
      calls,
      write: {
        create: () => {
          calls.push('create');
          return create();
        },
        replace: () => {
          calls.push('replace');
          return replace();
        },
      },
    };
  };
  const fail = (e: Error) => () => Promise.reject(e);
  const ok = (value: string) => () => Promise.resolve(value);

  it('creates a new object and does not replace', async () => {
    const { calls, write } = scripted(ok('created'), ok('replaced'));
    await expect(createOrReplace(write)).resolves.toBe('created');
    expect(calls).toEqual(['create']);
  });
  it('replaces when the create finds it already exists', async () => {
    const { calls, write } = scripted(fail(apiError(409, 'AlreadyExists')), ok('replaced'));
    await expect(createOrReplace(write)).resolves.toBe('replaced');
    expect(calls).toEqual(['create', 'replace']);
  });
  it('throws other create errors without replacing (a Conflict is not AlreadyExists)', async () => {
    const conflict = apiError(409, 'Conflict');
    const { calls, write } = scripted(fail(conflict), ok('replaced'));
    await expect(createOrReplace(write)).rejects.toBe(conflict);
    expect(calls).toEqual(['create']);
  });
  it('with exists: replaces first, and creates when it is gone', async () => {
    const present = scripted(ok('created'), ok('replaced'));
    await expect(createOrReplace(present.write, { exists: true })).resolves.toBe('replaced');
    expect(present.calls).toEqual(['replace']);
    const gone = scripted(ok('created'), fail(apiError(404, 'NotFound')));
    await expect(createOrReplace(gone.write, { exists: true })).resolves.toBe('created');
    expect(gone.calls).toEqual(['replace', 'create']);
  });
  it('with exists: throws other replace errors without creating', async () => {
    const invalid = apiError(422, 'Invalid');
    const { calls, write } = scripted(ok('created'), fail(invalid));
    await expect(createOrReplace(write, { exists: true })).rejects.toBe(invalid);
    expect(calls).toEqual(['replace']);
  });
});
