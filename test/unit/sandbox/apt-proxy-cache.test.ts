/**
 * The real nodes' apt proxy keeps files that never change under their name (pool .debs, by-hash
 * indexes) and serves them again without asking the archive; everything else, and anything that
 * did not arrive whole, is fetched again. A local HTTP server stands in for Debian's archive and
 * counts what it is asked.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { aptProxyServer } from '../../../src/sandbox/real-node/apt-proxy.js';

const DEB = Buffer.from('!<arch>\ndebian-binary   a pretend package\n');
const INDEX = Buffer.from('Package: tuned\nVersion: 2.20.0-1\n');
const INDEX_DIGEST = createHash('sha256').update(INDEX).digest('hex');
const WRONG_DIGEST = 'f'.repeat(64);

const asked: string[] = [];
let archive: Server;
let proxy: Server;
let cacheDir: string;
let archiveBase: string;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  cacheDir = mkdtempSync(join(tmpdir(), 'skyhook-deb-cache-'));
  archive = createServer((req, res) => {
    asked.push(req.url ?? '');
    if (req.url?.endsWith('truncated_1.0_all.deb')) {
      res.writeHead(200, { 'content-length': DEB.length * 2 });
      res.write(DEB);
      setImmediate(() => res.socket?.destroy());
      return;
    }
    res.writeHead(200, { 'content-length': req.url?.includes('.deb') ? DEB.length : INDEX.length });
    res.end(req.url?.includes('.deb') ? DEB : INDEX);
  });
  archiveBase = `http://localhost:${await listen(archive)}/debian`;
  proxy = aptProxyServer(['localhost'], cacheDir);
  await listen(proxy);
});

afterAll(async () => {
  proxy.closeAllConnections();
  archive.closeAllConnections();
  await Promise.all([proxy, archive].map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(cacheDir, { recursive: true, force: true });
});

/** GET `path` under the archive through the proxy; the body, or undefined when the transfer broke. */
function get(path: string): Promise<Buffer | undefined> {
  const { port } = proxy.address() as AddressInfo;
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: `${archiveBase}${path}` }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(res.complete ? Buffer.concat(chunks) : undefined));
      res.on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** The cache's settled files: waits until no download is still being written. */
async function settledCache(): Promise<string[]> {
  for (;;) {
    const names = readdirSync(cacheDir);
    if (!names.some((name) => name.endsWith('.partial'))) return names;
    await sleep(20);
  }
}

const timesAsked = (suffix: string): number => asked.filter((url) => url.endsWith(suffix)).length;

describe('the real-node apt proxy cache', () => {
  it('asks the archive for a pool .deb once and serves the same bytes again from the cache', async () => {
    const path = '/pool/main/t/tuned/tuned_2.20.0-1_all.deb';
    expect(await get(path)).toEqual(DEB);
    while ((await settledCache()).length === 0) await sleep(20);
    expect(await get(path)).toEqual(DEB);
    expect(timesAsked('tuned_2.20.0-1_all.deb')).toBe(1);
  });

  it('keeps a by-hash index only when its content has the digest its name says', async () => {
    const good = `/dists/bookworm/main/binary-amd64/by-hash/SHA256/${INDEX_DIGEST}`;
    const bad = `/dists/bookworm/main/binary-amd64/by-hash/SHA256/${WRONG_DIGEST}`;
    for (const path of [good, good, bad]) {
      expect(await get(path)).toEqual(INDEX);
      await settledCache();
    }
    expect(await get(bad)).toEqual(INDEX);
    expect([timesAsked(INDEX_DIGEST), timesAsked(WRONG_DIGEST)]).toEqual([1, 2]);
  });

  it('always forwards files that change under their name', async () => {
    for (let i = 0; i < 2; i++) expect(await get('/dists/bookworm/InRelease')).toEqual(INDEX);
    expect(timesAsked('/dists/bookworm/InRelease')).toBe(2);
  });

  it('keeps nothing of a download that broke off, and asks the archive again', async () => {
    const before = (await settledCache()).length;
    expect(await get('/pool/main/t/truncated/truncated_1.0_all.deb')).toBeUndefined();
    expect(await settledCache()).toHaveLength(before);
    await get('/pool/main/t/truncated/truncated_1.0_all.deb');
    expect(timesAsked('truncated_1.0_all.deb')).toBe(2);
  });
});
