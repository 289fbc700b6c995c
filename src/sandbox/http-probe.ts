/** Readiness probes for the control-plane components, over loopback only. */
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import type { Component } from './processes.js';

export interface TlsClient {
  ca?: string;
  cert?: string;
  key?: string;
}

export function loadTls(files: { ca?: string; cert?: string; key?: string }): TlsClient {
  const read = (file?: string): string | undefined => (file ? readFileSync(file, 'utf8') : undefined);
  return { ca: read(files.ca), cert: read(files.cert), key: read(files.key) };
}

function getStatus(url: string, tls?: TlsClient): Promise<number> {
  return new Promise((resolveStatus) => {
    const isHttps = url.startsWith('https:');
    const options = isHttps ? { ...tls, rejectUnauthorized: Boolean(tls?.ca), timeout: 2000 } : { timeout: 2000 };
    const req = (isHttps ? httpsRequest : httpRequest)(url, options, (res) => {
      res.resume();
      resolveStatus(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolveStatus(0));
    req.end();
  });
}

/**
 * Polls `url` until it answers 200. Fails early, naming the log, when the component exits; fails
 * after the timeout otherwise.
 */
export async function waitHealthy(
  component: Component,
  url: string,
  timeoutMs: number,
  tls?: TlsClient,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: string | undefined;
  void component.exited.then((code) => (exited = code));
  for (;;) {
    if (exited !== undefined)
      throw new Error(`${component.name} exited (${exited}) before it became ready; see ${component.logFile}`);
    if ((await getStatus(url, tls)) === 200) return;
    if (Date.now() > deadline)
      throw new Error(`${component.name} was not ready at ${url} after ${timeoutMs} ms; see ${component.logFile}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
