import { describe, expect, it } from '@jest/globals';
import { imagePullHint } from '../../../src/jobs/job-progress.js';

// containerd 1.6's words, as the kubelet reports them in ErrImagePull / ImagePullBackOff.
const MISSING =
  'failed to pull and unpack image "ghcr.io/x/y:9": failed to resolve reference "ghcr.io/x/y:9": ghcr.io/x/y:9: not found';
const UNAUTHORIZED =
  'failed to pull and unpack image "ghcr.io/x/y:1": failed to resolve reference "ghcr.io/x/y:1": unexpected status from HEAD request to https://127.0.0.1:5000/v2/x/y/manifests/1?ns=ghcr.io: 401 Unauthorized';

describe('imagePullHint', () => {
  it('says to check the tag when the registry has no such tag', () => {
    expect(imagePullHint(MISSING)).toMatch(/^the registry has no such tag or digest: check that the image exists/);
  });

  it("says to check the pull secret's credentials when the registry refuses them", () => {
    expect(imagePullHint(UNAUTHORIZED)).toMatch(/check the pull secret's credentials/);
    expect(
      imagePullHint('pull access denied, repository does not exist or may require authorization: authorization failed'),
    ).toMatch(/credentials/);
  });

  it('names both causes when the runtime says neither', () => {
    const hint = imagePullHint('dial tcp: lookup registry.invalid: no such host');
    expect(hint).toMatch(/check that the image exists/);
    expect(hint).toMatch(/imagePullSecrets grant access/);
    expect(imagePullHint(undefined)).toBe(hint);
  });
});
