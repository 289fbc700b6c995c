/**
 * The `WWW-Authenticate` challenge of a registry's 401: `Basic realm="…"` (Distribution with
 * htpasswd) or `Bearer realm="…",service="…",scope="…"` (ghcr.io, Docker Hub, Distribution with a
 * token server), whose realm hands out a token for the scope.
 */

export type Challenge =
  | { readonly scheme: 'basic' }
  | { readonly scheme: 'bearer'; readonly realm: string; readonly service?: string; readonly scope?: string };

/** The first Basic or Bearer challenge of the header; undefined when it names neither. */
export function parseChallenge(header: string | null | undefined): Challenge | undefined {
  if (!header) return undefined;
  const match = /^\s*(\w+)\s*(.*)$/s.exec(header);
  if (!match) return undefined;
  const scheme = match[1]!.toLowerCase();
  if (scheme === 'basic') return { scheme: 'basic' };
  if (scheme !== 'bearer') return undefined;
  const params = new Map<string, string>();
  for (const param of match[2]!.matchAll(/(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) {
    params.set(param[1]!.toLowerCase(), (param[2] ?? param[3] ?? '').replace(/\\(.)/g, '$1'));
  }
  const realm = params.get('realm');
  if (!realm) return undefined;
  const service = params.get('service');
  const scope = params.get('scope');
  return { scheme: 'bearer', realm, ...(service ? { service } : {}), ...(scope ? { scope } : {}) };
}

/** The token URL of a Bearer challenge, asking for pull access to the repository when the challenge names no scope. */
export function tokenUrl(challenge: Extract<Challenge, { scheme: 'bearer' }>, repository: string): string {
  const url = new URL(challenge.realm);
  if (challenge.service) url.searchParams.set('service', challenge.service);
  url.searchParams.set('scope', challenge.scope ?? `repository:${repository}:pull`);
  return url.toString();
}
