/**
 * Waiting on the API server with a watch instead of sleeps: list once, then watch from that
 * resourceVersion until the predicate holds for the object set.
 */
import { type KubeConfig, Watch } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { request as httpsRequest } from 'node:https';
import { nameOf, namespaceOf } from '../api/object-meta.js';

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

/**
 * A raw GET through the KubeConfig's TLS options, for list paths that typed clients lack. A non-2xx
 * answer rejects with an Error carrying `statusCode` and the raw `body` (errors.ts reads both);
 * `timeoutMs` bounds an answer that never comes.
 */
export async function getJson<T>(kc: KubeConfig, path: string, timeoutMs?: number): Promise<T> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const opts: { headers: Record<string, string> } & Record<string, unknown> = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  return new Promise<T>((resolveBody, reject) => {
    const req = httpsRequest(`${cluster.server}${path}`, { ...opts, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        if ((res.statusCode ?? 0) >= 300)
          reject(
            Object.assign(new Error(`GET ${path}: ${res.statusCode} ${body}`), { statusCode: res.statusCode, body }),
          );
        else resolveBody(JSON.parse(body) as T);
      });
    });
    req.on('error', reject);
    if (timeoutMs !== undefined)
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`GET ${path}: no answer within ${timeoutMs} ms`)));
    req.end();
  });
}

/**
 * Resolves with the objects at `path` (a list URL such as `/api/v1/nodes`) once `done(objects)`
 * returns true; rejects with `describe()` of the last state after `timeoutMs`, or with the abort
 * reason as soon as `signal` aborts (a caller that knows earlier that the wait is hopeless).
 */
export async function waitForList<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  done: (objects: T[]) => boolean,
  timeoutMs: number,
  what = path,
  { signal }: { signal?: AbortSignal } = {},
): Promise<T[]> {
  signal?.throwIfAborted();
  const objects = new Map<string, T>();
  const key = (o: T): string => `${namespaceOf(o)}/${nameOf(o)}`;
  const list = await getJson<{ items: T[]; metadata: { resourceVersion: string } }>(kc, path);
  for (const item of list.items) objects.set(key(item), item);
  if (done([...objects.values()])) return [...objects.values()];
  const watch = new Watch(kc);
  return new Promise<T[]>((resolveWait, reject) => {
    let controller: AbortController | undefined;
    let finished = false;
    const finish = (error?: Error): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      controller?.abort();
      if (error) reject(error);
      else resolveWait([...objects.values()]);
    };
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${JSON.stringify([...objects.values()].map((o) => o.metadata?.name))}`,
          ),
        ),
      timeoutMs,
    );
    const aborted = (): void =>
      finish(signal?.reason instanceof Error ? signal.reason : new Error(`stopped waiting for ${what}`));
    signal?.addEventListener('abort', aborted, { once: true });
    if (signal?.aborted) return aborted(); // aborted during the list
    const start = (resourceVersion: string): void => {
      watch
        .watch(
          path,
          { resourceVersion, allowWatchBookmarks: true },
          (type, obj: T) => {
            if (type === 'BOOKMARK' || type === 'ERROR') return;
            if (type === 'DELETED') objects.delete(key(obj));
            else objects.set(key(obj), obj);
            resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
            if (done([...objects.values()])) finish();
          },
          (err: unknown) => {
            // Watches end on server timeouts too: reopen from where we were, unless we are done.
            if (!finished)
              setTimeout(
                () =>
                  err && (err as { statusCode?: number }).statusCode === 410
                    ? finish(new Error(`watch of ${path} expired`))
                    : start(resourceVersion),
                200,
              );
          },
        )
        .then(
          (c) => {
            controller = c;
            if (finished) c.abort();
          },
          (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
        );
    };
    start(list.metadata.resourceVersion);
  });
}
