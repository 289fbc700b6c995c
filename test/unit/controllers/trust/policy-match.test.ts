/** Which policies cover an image and with which keys: the longest prefix within a policy, every policy across them. */
import { describe, expect, it } from '@jest/globals';
import { trustRequirements } from '../../../../src/controllers/trust/policy-match.js';
import { KEY_A, KEY_B, policyFor, trustPolicy } from './trust-fixtures.js';

describe('trustRequirements', () => {
  it('covers nothing an image no prefix matches: it runs as before', () => {
    expect(trustRequirements('docker.io/library/busybox', [policyFor('ghcr.io/nvidia/')])).toEqual([]);
  });

  it('gives the keys the matching entry names, by the names of spec.keys', () => {
    const [req] = trustRequirements('ghcr.io/nvidia/skyhook-packages/tuning', [policyFor('ghcr.io/nvidia/')]);
    expect(req).toEqual({
      policy: 'trusted',
      generation: 1,
      mode: 'Enforce',
      prefix: 'ghcr.io/nvidia/',
      keys: [{ name: 'a', publicKeyPem: KEY_A }],
    });
  });

  it('takes the longest matching prefix within one policy', () => {
    const policy = trustPolicy('p', {
      keys: [
        { name: 'a', publicKey: KEY_A },
        { name: 'b', publicKey: KEY_B },
      ],
      images: [
        { prefix: 'ghcr.io/', keys: ['a'] },
        { prefix: 'ghcr.io/nvidia/skyhook-packages/', keys: ['b'] },
      ],
    });
    const [narrow] = trustRequirements('ghcr.io/nvidia/skyhook-packages/tuned', [policy]);
    expect(narrow?.prefix).toBe('ghcr.io/nvidia/skyhook-packages/');
    expect(narrow?.keys.map((k) => k.name)).toEqual(['b']);
    const [broad] = trustRequirements('ghcr.io/other/tool', [policy]);
    expect(broad?.keys.map((k) => k.name)).toEqual(['a']);
  });

  it('applies every policy that covers the image (all must pass), in name order; Enforce is the default mode', () => {
    const second = trustPolicy('b-policy', {
      keys: [{ name: 'b', publicKey: KEY_B }],
      images: [{ prefix: 'ghcr.io/', keys: ['b'] }],
    });
    const reqs = trustRequirements('ghcr.io/nvidia/x', [policyFor('ghcr.io/nvidia/', 'Warn', 'z-policy'), second]);
    expect(reqs.map((r) => [r.policy, r.mode])).toEqual([
      ['b-policy', 'Enforce'],
      ['z-policy', 'Warn'],
    ]);
  });

  it('ignores a policy being deleted', () => {
    const deleting = policyFor('ghcr.io/');
    deleting.metadata.deletionTimestamp = new Date(0);
    expect(trustRequirements('ghcr.io/x', [deleting])).toEqual([]);
  });
});
