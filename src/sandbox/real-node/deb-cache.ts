/**
 * The real nodes' apt proxy keeps what never changes under a name: Debian's pool files (`…/pool/…
 * .deb`, a package's file name carries its version and is never reused with other content) and
 * by-hash index files (`…/by-hash/SHA256/<digest>`, named by their content). A package test that
 * installs software through the node's apt then downloads it once per machine, not once per run.
 * Release files, InRelease and Packages under their plain names change and are always forwarded.
 *
 * Files live under <cache root>/apt-debs/, named by the SHA-256 of their URL. A download is stored
 * only when complete (status 200, no range, as many bytes as Content-Length, and for by-hash the
 * digest its name says), written to a temporary name and renamed, so concurrent nodes never see half.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { cacheRoot } from '../binaries.js';

const BY_HASH = /\/by-hash\/SHA256\/([0-9a-f]{64})$/;
const POOL_FILE = /\/pool\/.+\.u?deb$/;

export function defaultDebCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'apt-debs');
}

/** The cache file of `url`, or undefined when its content may change under the same URL. */
export function cachedFilePath(dir: string, url: URL): string | undefined {
  if (url.search !== '' || !(BY_HASH.test(url.pathname) || POOL_FILE.test(url.pathname))) return undefined;
  return join(dir, createHash('sha256').update(url.href).digest('hex'));
}

/** Serves a cached file; false when the request is not for one (then it is forwarded). */
export function serveCached(file: string | undefined, req: IncomingMessage, res: ServerResponse): boolean {
  // A range request resumes a partial download; the archive answers it better than a whole file.
  if (!file || req.headers.range || !existsSync(file)) return false;
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': statSync(file).size });
  if (req.method === 'HEAD') res.end();
  else createReadStream(file).pipe(res);
  return true;
}

/** Keeps a copy of the archive's answer in `file` once it has arrived whole. */
export function storeAnswer(file: string | undefined, req: IncomingMessage, answer: IncomingMessage): void {
  if (!file || req.method !== 'GET' || req.headers.range || answer.statusCode !== 200) return;
  const expectedLength = Number(answer.headers['content-length'] ?? Number.NaN);
  const expectedDigest = BY_HASH.exec(new URL(req.url ?? '').pathname)?.[1];
  mkdirSync(join(file, '..'), { recursive: true });
  const partial = `${file}.${randomBytes(6).toString('hex')}.partial`;
  // Opened now, not when the stream gets to it: a download that breaks off at once leaves no file behind.
  const out = createWriteStream(partial, { fd: openSync(partial, 'w') });
  const digest = createHash('sha256');
  let bytes = 0;
  let discarded = false;
  answer.on('data', (chunk: Buffer) => {
    if (discarded) return;
    bytes += chunk.length;
    digest.update(chunk);
    out.write(chunk);
  });
  const discard = (): void => {
    discarded = true;
    out.destroy();
    rmSync(partial, { force: true });
  };
  // The cache is an optimisation: a disk error loses the copy, never the download apt receives.
  out.on('error', discard);
  answer.on('error', discard);
  answer.on('close', () => {
    if (!answer.complete) discard();
  });
  answer.on('end', () => {
    const whole =
      (Number.isNaN(expectedLength) || bytes === expectedLength) &&
      (expectedDigest === undefined || digest.digest('hex') === expectedDigest);
    if (!whole || discarded) return discard();
    out.end(() => {
      try {
        renameSync(partial, file);
      } catch {
        rmSync(partial, { force: true });
      }
    });
  });
}
