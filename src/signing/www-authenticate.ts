/**
 * The `WWW-Authenticate` challenge of a registry's 401: `Basic realm="…"` (Distribution with
 * htpasswd) or `Bearer realm="…",service="…",scope="…"` (ghcr.io, Docker Hub, Distribution with a
 * token server), whose realm hands out a token for the scope.
 */
import { BlockList, isIP } from 'node:net';

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

/**
 * Why a challenge's realm must not be asked, or undefined when it may be: the credentials go there,
 * so a registry must not steer them to plain HTTP, or to a loopback, private or link-local address
 * other than its own host (a cloud metadata service, a cluster-internal service). Host names are not
 * resolved: DNS-based steering is the network policy's to stop, as in go-containerregistry.
 */
export function realmRefusal(realm: string, registryBaseUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(realm);
  } catch {
    return `its token realm "${realm}" is not a URL`;
  }
  const registry = new URL(registryBaseUrl);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && registry.protocol === 'http:'))
    return `its token realm ${realm} is not https`;
  if (url.hostname === registry.hostname) return undefined;
  const ip = isIP(url.hostname.replace(/^\[|\]$/g, '')) ? url.hostname.replace(/^\[|\]$/g, '') : undefined;
  if (ip && isInternal(ip)) return `its token realm ${realm} is a loopback, private or link-local address`;
  return undefined;
}

function isInternal(ip: string): boolean {
  const list = new BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addSubnet('10.0.0.0', 8, 'ipv4');
  list.addSubnet('172.16.0.0', 12, 'ipv4');
  list.addSubnet('192.168.0.0', 16, 'ipv4');
  list.addSubnet('169.254.0.0', 16, 'ipv4');
  list.addAddress('0.0.0.0', 'ipv4');
  list.addAddress('::1', 'ipv6');
  list.addAddress('::', 'ipv6');
  list.addSubnet('fc00::', 7, 'ipv6');
  list.addSubnet('fe80::', 10, 'ipv6');
  return list.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4');
}

/** The token URL of a Bearer challenge, asking for pull access to the repository when the challenge names no scope. */
export function tokenUrl(challenge: Extract<Challenge, { scheme: 'bearer' }>, repository: string): string {
  const url = new URL(challenge.realm);
  if (challenge.service) url.searchParams.set('service', challenge.service);
  url.searchParams.set('scope', challenge.scope ?? `repository:${repository}:pull`);
  return url.toString();
}
