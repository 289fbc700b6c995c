/**
 * How a real node's apt reaches Debian's archive: the node's network namespace has no route out,
 * so the supervisor serves an HTTP proxy on the host end of the node's veth that forwards GET and
 * HEAD requests to the hosts this machine's own apt uses (its sources lists, plus
 * $SKYHOOK_DEBIAN_MIRROR) and refuses everything else: no CONNECT, no other host, no IP literal.
 * A package that installs software through the node's apt (tuned) then runs unchanged.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { join } from 'node:path';

export const APT_PROXY_PORT = 3142;

/** Hosts of the http(s) URIs in apt sources files (one-line `deb …` and deb822 `URIs:`). */
export function aptSourceHosts(texts: readonly string[]): string[] {
  const hosts = new Set<string>();
  for (const text of texts) {
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed.startsWith('#')) continue;
      for (const match of trimmed.matchAll(/\bhttps?:\/\/([^/\s:\]]+)/g)) {
        if (/^(deb|deb-src)\s|^URIs:/i.test(trimmed) && match[1]) hosts.add(match[1].toLowerCase());
      }
    }
  }
  return [...hosts].sort();
}

/** The hosts this machine's apt fetches from. */
export function machineAptHosts(env: NodeJS.ProcessEnv = process.env): string[] {
  const files = ['/etc/apt/sources.list'];
  const dir = '/etc/apt/sources.list.d';
  if (existsSync(dir))
    for (const name of readdirSync(dir)) if (/\.(list|sources)$/.test(name)) files.push(join(dir, name));
  const texts = files.filter(existsSync).map((file) => readFileSync(file, 'utf8'));
  const mirror = env['SKYHOOK_DEBIAN_MIRROR'];
  if (mirror) texts.push(`deb ${mirror} bookworm main`);
  return aptSourceHosts(texts);
}

/** Why a proxied request is refused, or undefined when it may go. */
export function refusal(
  method: string | undefined,
  url: string | undefined,
  allowed: readonly string[],
): string | undefined {
  if (method !== 'GET' && method !== 'HEAD') return `method ${method} not allowed (GET and HEAD only)`;
  let target: URL;
  try {
    target = new URL(url ?? '');
  } catch {
    return `not an absolute URL: ${url}`;
  }
  if (target.protocol !== 'http:') return `${target.protocol} not allowed (http only)`;
  if (isIP(target.hostname.replace(/^\[|\]$/g, ''))) return `IP address ${target.hostname} not allowed`;
  if (!allowed.includes(target.hostname.toLowerCase()))
    return `host ${target.hostname} is not one of this machine's apt sources (${allowed.join(', ')})`;
  return undefined;
}

function forward(req: IncomingMessage, res: ServerResponse): void {
  const target = new URL(req.url ?? '');
  const headers = { ...req.headers };
  delete headers['proxy-connection'];
  delete headers['proxy-authorization'];
  const upstream = request(target, { method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', (error) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`sandbox apt proxy: ${error.message}\n`);
  });
  upstream.end();
}

export interface AptProxy {
  stop(): Promise<void>;
}

/** Serves the proxy on `hostIp:APT_PROXY_PORT` (the host end of one node's veth). */
export async function startAptProxy(hostIp: string, allowed = machineAptHosts()): Promise<AptProxy> {
  const server: Server = createServer((req, res) => {
    const why = refusal(req.method, req.url, allowed);
    if (!why) return forward(req, res);
    res.writeHead(403, { 'content-type': 'text/plain' });
    res.end(`sandbox apt proxy: ${why}\n`);
  });
  server.on('connect', (_req, socket) => socket.end('HTTP/1.1 403 Forbidden\r\n\r\nsandbox apt proxy: no CONNECT\r\n'));
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(APT_PROXY_PORT, hostIp, () => resolveListen());
  });
  server.unref();
  return {
    stop: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

/** The node's apt configuration pointing at its proxy. */
export function aptProxyConfig(hostIp: string): string {
  return `Acquire::http::Proxy "http://${hostIp}:${APT_PROXY_PORT}/";\nAcquire::https::Proxy "DIRECT";\n`;
}
