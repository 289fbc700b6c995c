/** The verifier's registry access: mirrors and CA from the settings, credentials from the pull secrets. */
import { describe, expect, it } from '@jest/globals';
import type { CoreV1Api } from '@kubernetes/client-node';
import {
  parseRegistryMirrors,
  readRegistrySettings,
  registryAccessFor,
} from '../../../../src/controllers/trust/registry-access.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const dockerConfig = (auths: Record<string, object>): string =>
  Buffer.from(JSON.stringify({ auths })).toString('base64');

describe('REGISTRY_MIRRORS and REGISTRY_CA_FILE', () => {
  it('maps each registry host to its mirror, as the nodes containerd does', () => {
    expect(parseRegistryMirrors('ghcr.io=https://mirror:5000/, docker.io=https://hub.local')).toEqual({
      'ghcr.io': 'https://mirror:5000',
      'docker.io': 'https://hub.local',
    });
    expect(parseRegistryMirrors('')).toEqual({});
  });

  it('refuses an entry that is not host=https://url, naming it and the form', () => {
    expect(() => parseRegistryMirrors('ghcr.io:mirror')).toThrow(/REGISTRY_MIRRORS entry 'ghcr.io:mirror' must be/);
  });

  it('reads the CA file, and refuses one without a PEM certificate or that cannot be read', () => {
    expect(readRegistrySettings({ REGISTRY_CA_FILE: '/ca.pem' }, () => CA).caPem).toBe(CA);
    expect(() => readRegistrySettings({ REGISTRY_CA_FILE: '/ca.pem' }, () => 'junk')).toThrow(
      /holds no PEM certificate/,
    );
    expect(() =>
      readRegistrySettings({ REGISTRY_CA_FILE: '/nope' }, () => {
        throw new Error('ENOENT');
      }),
    ).toThrow(/REGISTRY_CA_FILE '\/nope' cannot be read \(ENOENT\)/);
  });
});

describe('pull secret credentials', () => {
  it("uses the operator's secret first, then the package's, skips a missing one and passes mirrors and CA on", async () => {
    const secrets: Record<string, Record<string, string>> = {
      operator: { '.dockerconfigjson': dockerConfig({ 'ghcr.io': { username: 'op', password: '1' } }) },
      own: {
        '.dockerconfigjson': dockerConfig({
          'https://ghcr.io/v2/': { auth: Buffer.from('pkg:2').toString('base64') },
          'mirror:5000': { username: 'm', password: '3' },
        }),
      },
    };
    const core = {
      readNamespacedSecret: async ({ name }: { name: string }) => {
        if (!secrets[name]) throw Object.assign(new Error('not found'), { code: 404 });
        return { data: secrets[name] };
      },
    } as unknown as CoreV1Api;
    const access = await registryAccessFor(core, 'skyhook', ['operator', 'missing', 'own'], {
      mirrors: { 'ghcr.io': 'https://mirror:5000' },
      caPem: CA,
    });
    expect(access.credentialsFor('ghcr.io')).toEqual({ username: 'op', password: '1' });
    expect(access.credentialsFor('mirror:5000')).toEqual({ username: 'm', password: '3' });
    expect(access.credentialsFor('quay.io')).toBeUndefined();
    expect(access.mirrors).toEqual({ 'ghcr.io': 'https://mirror:5000' });
    expect(access.caPem).toBe(CA);
  });
});
