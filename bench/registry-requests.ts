/**
 * The registry requests of `rollout-1000-signed`, from the registry's access log (pure): the log's
 * lines parsed, grouped by what was asked, and the figure the benchmark promises, requests per
 * package version, checked: one verification takes 3 to 5 requests (auth challenge, tag, signature
 * manifest, a payload per signature), so more than MAX_REQUESTS_PER_PACKAGE_VERSION means the
 * operator asked per node or per reconcile instead of once.
 */

export const MAX_REQUESTS_PER_PACKAGE_VERSION = 10;

export interface RegistryRequest {
  method: string;
  path: string;
  status: number;
  userAgent: string;
}

/** One access-log line: `host - user [time] "METHOD /path HTTP/x" status size "referer" "agent"`. */
const ACCESS_LINE = /^\S+ \S+ \S+ \[[^\]]+\] "(\S+) (\S+) [^"]*" (\d{3}) \S+ "[^"]*" "([^"]*)"/;

/** The access-log lines of the registry's log; its other lines (its own logging) are skipped. */
export function parseAccessLog(text: string): RegistryRequest[] {
  return text.split('\n').flatMap((line) => {
    const match = ACCESS_LINE.exec(line);
    return match ? [{ method: match[1]!, path: match[2]!, status: Number(match[3]), userAgent: match[4]! }] : [];
  });
}

/** What a request asked for: a tag's manifest, a signature manifest (`sha256-….sig`), a blob, or the API root. */
export function requestKind(path: string): 'tag' | 'signature' | 'digest' | 'blob' | 'root' | 'other' {
  if (path === '/v2/') return 'root';
  if (/\/blobs\//.test(path)) return 'blob';
  const manifest = /\/manifests\/([^/?]+)$/.exec(path);
  if (!manifest) return 'other';
  if (manifest[1]!.endsWith('.sig')) return 'signature';
  return manifest[1]!.startsWith('sha256:') ? 'digest' : 'tag';
}

export interface RequestFigures {
  nodes: number;
  packageVersions: number;
  registryRequests: number;
  /** `<method> <kind> <status>` → how many. */
  registryRequestsByKind: Record<string, number>;
  /** Tags resolved (answered 200): one per verification of a package version by tag. */
  verificationsPerformed: number;
  registryRequestsPerPackageVersion: number;
  registryRequestsPerNode: number;
}

export function requestFigures(
  requests: readonly RegistryRequest[],
  nodes: number,
  packageVersions: number,
): RequestFigures {
  const byKind: Record<string, number> = {};
  for (const r of requests) {
    const key = `${r.method} ${requestKind(r.path)} ${r.status}`;
    byKind[key] = (byKind[key] ?? 0) + 1;
  }
  return {
    nodes,
    packageVersions,
    registryRequests: requests.length,
    registryRequestsByKind: byKind,
    verificationsPerformed: requests.filter((r) => r.status === 200 && requestKind(r.path) === 'tag').length,
    registryRequestsPerPackageVersion: Math.round((requests.length / packageVersions) * 100) / 100,
    registryRequestsPerNode: Math.round((requests.length / nodes) * 10_000) / 10_000,
  };
}

/**
 * Why the figures break the promise, or undefined: no request at all (nothing was verified, so the
 * run measured nothing), or more than the bound per package version (requests grew with the nodes).
 */
export function brokenPromise(figures: RequestFigures): string | undefined {
  if (figures.registryRequests === 0)
    return 'the operator made no registry request: no package was verified (is the PackageTrustPolicy loaded?)';
  if (figures.registryRequestsPerPackageVersion > MAX_REQUESTS_PER_PACKAGE_VERSION)
    return (
      `the operator made ${figures.registryRequests} registry requests for ${figures.packageVersions} package ` +
      `version(s) on ${figures.nodes} nodes, more than ${MAX_REQUESTS_PER_PACKAGE_VERSION} per package version: ` +
      'signature verification must run once per package version, not per node'
    );
  return undefined;
}
