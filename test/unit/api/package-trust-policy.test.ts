/**
 * The PackageTrustPolicy schema: what ajv (and the API server's structural schema) refuses, and the
 * CEL rules the CRD carries for what a pattern cannot check (the API server runs them: test/e2e/api.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { customResourceDefinition } from '../../../src/api/resource-definition.js';
import { PACKAGE_TRUST_POLICY_DEFINITION } from '../../../src/api/package-trust-policy.js';
import { validatePackageTrustPolicy } from '../../../src/api/validators.js';

const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ type: 'spki', format: 'pem' })
  .toString();

const policy = (spec: Record<string, unknown>) => ({
  apiVersion: 'skyhook.nvidia.com/v1alpha1',
  kind: 'PackageTrustPolicy',
  metadata: { name: 'p' },
  spec: { keys: [{ name: 'a', publicKey: pem }], images: [{ prefix: 'ghcr.io/', keys: ['a'] }], ...spec },
});

describe('PackageTrustPolicy schema', () => {
  it('accepts a PEM public key as cosign writes it, and defaults mode to Enforce', () => {
    const result = validatePackageTrustPolicy(policy({}));
    if (!result.ok) throw new Error(result.errors.join('\n'));
    expect(result.value.spec.mode).toBe('Enforce');
  });

  it('refuses a key that is not a PEM public key (a private key, a certificate, base64 alone)', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    for (const bad of [privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'MFkwEwYHKoZIzj0C', '']) {
      const result = validatePackageTrustPolicy(policy({ keys: [{ name: 'a', publicKey: bad }] }));
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.errors.join('\n')).toContain('publicKey');
    }
  });

  it('refuses a mode other than Enforce or Warn, a key name that is not a DNS label, and empty lists', () => {
    for (const spec of [
      { mode: 'Audit' },
      { keys: [{ name: 'Release_Key', publicKey: pem }] },
      { keys: [] },
      { images: [] },
      { images: [{ prefix: 'ghcr.io/', keys: [] }] },
    ])
      expect(validatePackageTrustPolicy(policy(spec)).ok).toBe(false);
  });

  it('carries the CEL rules for unique key names, unique prefixes and images[].keys naming a key', () => {
    const text = JSON.stringify(customResourceDefinition(PACKAGE_TRUST_POLICY_DEFINITION));
    expect(text).toContain('self.all(k, self.exists_one(o, o.name == k.name))');
    expect(text).toContain('self.all(i, self.exists_one(o, o.prefix == i.prefix))');
    expect(text).toContain('self.images.all(i, i.keys.all(n, self.keys.exists(k, k.name == n)))');
  });

  it('is cluster-scoped with the short name ptp', () => {
    const crd = customResourceDefinition(PACKAGE_TRUST_POLICY_DEFINITION) as {
      spec: { scope: string; names: { shortNames?: string[] } };
    };
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names.shortNames).toEqual(['ptp']);
  });
});
