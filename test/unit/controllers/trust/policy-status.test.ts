/** A PackageTrustPolicy's status: Ready when every key loads, else False naming each key and the fix. */
import { describe, expect, it } from '@jest/globals';
import { trustPolicyStatus } from '../../../../src/controllers/trust/policy-status.js';
import { KEY_A, policyFor, trustPolicy } from './trust-fixtures.js';

describe('trustPolicyStatus', () => {
  it('is Ready at the policy generation when its keys load', () => {
    const policy = policyFor('ghcr.io/');
    policy.metadata.generation = 4;
    const status = trustPolicyStatus(policy, 0);
    expect(status.observedGeneration).toBe(4);
    expect(status.conditions?.[0]).toMatchObject({
      type: 'Ready',
      status: 'True',
      reason: 'KeysLoaded',
      observedGeneration: 4,
      message: '2 key(s) loaded; 1 image prefix(es) covered in Enforce mode',
    });
  });

  it('is not Ready, naming the key, when one looks like PEM but is no public key', () => {
    const broken = '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n';
    const policy = trustPolicy('p', {
      keys: [
        { name: 'good', publicKey: KEY_A },
        { name: 'broken', publicKey: broken },
      ],
      images: [{ prefix: 'ghcr.io/', keys: ['good', 'broken'] }],
    });
    const [ready] = trustPolicyStatus(policy, 0).conditions ?? [];
    expect([ready?.status, ready?.reason]).toEqual(['False', 'InvalidKey']);
    expect(ready?.message).toMatch(/^spec\.keys\[1\] \(broken\) is not a public key \(.+\): paste cosign\.pub/);
  });

  it('keeps the transition time while the status holds', () => {
    const policy = policyFor('ghcr.io/');
    policy.status = trustPolicyStatus(policy, 1_000);
    expect(trustPolicyStatus(policy, 9_000).conditions?.[0]?.lastTransitionTime).toBe(new Date(1_000).toISOString());
  });
});
