/** A Job or reboot pod the API server refuses as invalid fails the node instead of being retried forever. */
import { describe, expect, it } from '@jest/globals';
import { createIfAbsent, RefusedAsInvalidError } from '../../../../src/controllers/nodeop/context.js';

const apiError = (code: number, reason: string, message: string) =>
  Object.assign(new Error(`HTTP ${code}`), { code, body: JSON.stringify({ kind: 'Status', code, reason, message }) });

describe('createIfAbsent', () => {
  it('creates, or reports an existing object', async () => {
    await expect(createIfAbsent(async () => undefined, 'Job')).resolves.toBe(true);
    await expect(createIfAbsent(() => Promise.reject(apiError(409, 'AlreadyExists', 'exists')), 'Job')).resolves.toBe(
      false,
    );
  });

  it("turns 422 Invalid into a RefusedAsInvalidError naming the object, the API server's field and the fix", async () => {
    const refusal = apiError(
      422,
      'Invalid',
      'Job.batch "j" is invalid: spec.template.spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than \'=\'',
    );
    const error = await createIfAbsent(() => Promise.reject(refusal), 'Job').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RefusedAsInvalidError);
    expect((error as Error).message).toBe(
      `the API server refused the Job built from this NodeOp: Invalid: ${JSON.parse(refusal.body).message}; fix that field of the NodeOp (of a Skyhook stage: the package's env, image, agentImageOverride or resources in the Skyhook)`,
    );
  });

  it("leaves other errors to the reconcile's retry", async () => {
    const error = await createIfAbsent(() => Promise.reject(apiError(500, 'InternalError', 'etcd down')), 'Job').catch(
      (e: unknown) => e,
    );
    expect(error).not.toBeInstanceOf(RefusedAsInvalidError);
  });
});
