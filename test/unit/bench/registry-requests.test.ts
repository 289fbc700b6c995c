/** rollout-1000-signed's registry figures: the access log parsed, and the per-package-version promise checked. */
import { describe, expect, it } from '@jest/globals';
import {
  brokenPromise,
  MAX_REQUESTS_PER_PACKAGE_VERSION,
  parseAccessLog,
  type RegistryRequest,
  requestFigures,
  requestKind,
} from '../../../bench/registry-requests.js';

const SIG = '/v2/bench/pkg/manifests/sha256-db19.sig';
const log = [
  'time="2026-11-29T00:40:26.45Z" level=warning msg="error authorizing context" http.request.method=HEAD',
  '127.0.0.1 - - [29/Nov/2026:00:40:26 +0000] "HEAD /v2/bench/pkg/manifests/1.0.0 HTTP/2.0" 401 163 "" "undici"',
  'time="2026-11-29T00:40:26.59Z" level=info msg="response completed" http.response.status=200',
  '127.0.0.1 - - [29/Nov/2026:00:40:26 +0000] "HEAD /v2/bench/pkg/manifests/1.0.0 HTTP/2.0" 200 0 "" "undici"',
  `127.0.0.1 - - [29/Nov/2026:00:40:26 +0000] "GET ${SIG} HTTP/2.0" 200 558 "" "undici"`,
  '127.0.0.1 - bench [29/Nov/2026:00:40:27 +0000] "GET /v2/bench/pkg/blobs/sha256:e5ac HTTP/2.0" 200 252 "" "cosign/v3"',
  '',
].join('\n');

const verification = (): RegistryRequest[] => parseAccessLog(log);

describe('parseAccessLog', () => {
  it('reads the access lines only, each with method, path, status and user agent', () => {
    expect(verification()).toEqual([
      { method: 'HEAD', path: '/v2/bench/pkg/manifests/1.0.0', status: 401, userAgent: 'undici' },
      { method: 'HEAD', path: '/v2/bench/pkg/manifests/1.0.0', status: 200, userAgent: 'undici' },
      { method: 'GET', path: SIG, status: 200, userAgent: 'undici' },
      { method: 'GET', path: '/v2/bench/pkg/blobs/sha256:e5ac', status: 200, userAgent: 'cosign/v3' },
    ]);
  });
});

describe('requestKind', () => {
  it('tells a tag from a digest, a signature manifest, a blob and the API root', () => {
    expect(requestKind('/v2/a/b/manifests/1.0.0')).toBe('tag');
    expect(requestKind('/v2/a/manifests/sha256:ab')).toBe('digest');
    expect(requestKind('/v2/a/manifests/sha256-ab.sig')).toBe('signature');
    expect(requestKind('/v2/a/blobs/sha256:ab')).toBe('blob');
    expect(requestKind('/v2/')).toBe('root');
    expect(requestKind('/v2/a/blobs/uploads/')).toBe('blob');
    expect(requestKind('/metrics')).toBe('other');
  });
});

describe('requestFigures and brokenPromise', () => {
  it('counts one verification of one package version on 1000 nodes as its requests per version, ~0 per node', () => {
    const figures = requestFigures(verification(), 1000, 1);
    expect(figures).toEqual({
      nodes: 1000,
      packageVersions: 1,
      registryRequests: 4,
      registryRequestsByKind: { 'HEAD tag 401': 1, 'HEAD tag 200': 1, 'GET signature 200': 1, 'GET blob 200': 1 },
      verificationsPerformed: 1,
      registryRequestsPerPackageVersion: 4,
      registryRequestsPerNode: 0.004,
    });
    expect(brokenPromise(figures)).toBeUndefined();
  });

  it('fails a run whose requests grew with the nodes', () => {
    const perNode = Array.from({ length: 20 }, verification).flat();
    const broken = brokenPromise(requestFigures(perNode, 20, 1));
    expect(broken).toContain(`80 registry requests for 1 package version(s) on 20 nodes`);
    expect(broken).toContain(`more than ${MAX_REQUESTS_PER_PACKAGE_VERSION} per package version`);
  });

  it('fails a run that verified nothing, as it measured nothing', () => {
    expect(brokenPromise(requestFigures([], 1000, 1))).toContain('no package was verified');
  });

  it('bounds per package version: two versions may take twice the requests of one', () => {
    const twice = [...verification(), ...verification(), ...verification(), ...verification(), ...verification()];
    expect(brokenPromise(requestFigures(twice, 1000, 1))).toBeDefined();
    expect(brokenPromise(requestFigures(twice, 1000, 2))).toBeUndefined();
  });
});
