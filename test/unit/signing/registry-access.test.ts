/**
 * How the verifier addresses registries (pure): image references with Docker Hub's short names made
 * whole, the API base URL through mirrors, the `.sig` tag, the WWW-Authenticate challenges of Basic
 * and token registries, and credentials from a dockerconfigjson.
 */
import { describe, expect, it } from '@jest/globals';
import {
  credentialsFromDockerConfig,
  credentialsLookup,
  normalizeRegistryHost,
} from '../../../src/signing/docker-config.js';
import { parseImageReference, registryBaseUrl, signatureTag } from '../../../src/signing/reference.js';
import { parseChallenge, realmRefusal, tokenUrl } from '../../../src/signing/www-authenticate.js';

const DIGEST = `sha256:${'f'.repeat(64)}`;

describe('image references', () => {
  it.each([
    [
      'ghcr.io/nvidia/skyhook-packages/shellscript:1.3.2',
      'ghcr.io',
      'nvidia/skyhook-packages/shellscript',
      '1.3.2',
      undefined,
    ],
    ['busybox', 'docker.io', 'library/busybox', 'latest', undefined],
    ['example/tool:v1', 'docker.io', 'example/tool', 'v1', undefined],
    ['127.0.0.1:5000/pkg/x', '127.0.0.1:5000', 'pkg/x', 'latest', undefined],
    [`localhost/x@${DIGEST}`, 'localhost', 'x', undefined, DIGEST],
    [`ghcr.io/a/b:1@${DIGEST}`, 'ghcr.io', 'a/b', '1', DIGEST],
  ])('%s', (image, registry, repository, tag, digest) => {
    const ref = parseImageReference(image);
    expect(ref).toEqual({
      registry,
      repository,
      ...(tag !== undefined ? { tag } : {}),
      ...(digest !== undefined ? { digest } : {}),
    });
  });

  it('names what is wrong with a bad reference', () => {
    expect(() => parseImageReference('ghcr.io/a/b@sha256:12')).toThrow(/sha256:<64 lowercase hex digits>/);
    expect(() => parseImageReference('ghcr.io/A/B:1')).toThrow(/not a repository name/);
  });

  it('asks the mirror when one serves the registry, Docker Hub at its API host', () => {
    expect(registryBaseUrl('ghcr.io', { 'ghcr.io': 'https://127.0.0.1:5000/' })).toBe('https://127.0.0.1:5000');
    expect(registryBaseUrl('ghcr.io', { 'ghcr.io': 'https://m:5000/v2' })).toBe('https://m:5000');
    expect(registryBaseUrl('ghcr.io')).toBe('https://ghcr.io');
    expect(registryBaseUrl('docker.io')).toBe('https://registry-1.docker.io');
  });

  it("puts the signatures under cosign's sha256-<hex>.sig tag", () => {
    expect(signatureTag(DIGEST)).toBe(`sha256-${'f'.repeat(64)}.sig`);
  });
});

describe('WWW-Authenticate challenges', () => {
  it('reads Basic and Bearer challenges', () => {
    expect(parseChallenge('Basic realm="skyhook-sandbox"')).toEqual({ scheme: 'basic' });
    expect(
      parseChallenge('Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a/b:pull"'),
    ).toEqual({ scheme: 'bearer', realm: 'https://ghcr.io/token', service: 'ghcr.io', scope: 'repository:a/b:pull' });
    expect(parseChallenge('Negotiate')).toBeUndefined();
    expect(parseChallenge('Bearer service="x"')).toBeUndefined();
    expect(parseChallenge(null)).toBeUndefined();
  });

  it('never sends credentials to a realm on plain HTTP or on an internal address other than the registry host', () => {
    expect(realmRefusal('https://ghcr.io/token', 'https://ghcr.io')).toBeUndefined();
    expect(realmRefusal('https://auth.docker.io/token', 'https://registry-1.docker.io')).toBeUndefined();
    expect(realmRefusal('https://10.0.0.5:5001/token', 'https://10.0.0.5:5000')).toBeUndefined();
    expect(realmRefusal('https://localhost:5001/token', 'https://127.0.0.1:5000')).toBeUndefined();
    expect(realmRefusal('http://auth.example/token', 'https://reg.example')).toMatch(/not https/);
    expect(realmRefusal('https://169.254.169.254/latest', 'https://reg.example')).toMatch(/link-local/);
    expect(realmRefusal('https://127.0.0.1:9/token', 'https://reg.example')).toMatch(/loopback/);
    expect(realmRefusal('https://[::1]:9/token', 'https://reg.example')).toMatch(/loopback/);
    expect(realmRefusal('https://192.168.1.1/token', 'https://reg.example')).toMatch(/private/);
    expect(realmRefusal('not a url', 'https://reg.example')).toMatch(/not a URL/);
  });

  it('asks the token service for pull access to the repository when the challenge names no scope', () => {
    const url = new URL(tokenUrl({ scheme: 'bearer', realm: 'https://auth.example/token', service: 'reg' }, 'a/b'));
    expect(url.searchParams.get('service')).toBe('reg');
    expect(url.searchParams.get('scope')).toBe('repository:a/b:pull');
  });
});

describe('credentials from a dockerconfigjson', () => {
  it('reads auth and username/password entries by normalized host', () => {
    const json = JSON.stringify({
      auths: {
        'https://index.docker.io/v1/': { auth: Buffer.from('hub:pw:with:colons').toString('base64') },
        '127.0.0.1:5000': { username: 'skyhook', password: 'secret' },
      },
    });
    const lookup = credentialsLookup(credentialsFromDockerConfig(json));
    expect(lookup('docker.io')).toEqual({ username: 'hub', password: 'pw:with:colons' });
    expect(lookup('127.0.0.1:5000')).toEqual({ username: 'skyhook', password: 'secret' });
    expect(lookup('ghcr.io')).toBeUndefined();
    expect(normalizeRegistryHost('HTTPS://GHCR.IO/')).toBe('ghcr.io');
  });

  it('names the entry without credentials, and a file that is not a dockerconfigjson', () => {
    expect(() => credentialsFromDockerConfig('{"auths":{"ghcr.io":{}}}', 'secret.json')).toThrow(
      /secret\.json: auths\["ghcr\.io"\] has neither/,
    );
    expect(() => credentialsFromDockerConfig('{}', 'secret.json')).toThrow(/no "auths" object/);
    expect(() => credentialsFromDockerConfig('nope', 'secret.json')).toThrow(/not JSON/);
  });
});
