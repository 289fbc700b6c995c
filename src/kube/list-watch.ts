/**
 * The ListWatch seam (the two API calls an Informer needs, faked in its unit tests) and the real
 * one behind it: a paged GET of a list path and client-node's Watch on the same path, both with
 * the informer's selectors. Paths are API list URLs, e.g.
 * `/api/v1/nodes`, `/api/v1/namespaces/ns/configmaps`, `/apis/batch/v1/jobs` (all namespaces).
 */
import { Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { getJson } from './wait.js';

export interface Selectors {
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ListOptions extends Selectors {
  limit?: number;
  continue?: string;
}

export interface ListPage<T> {
  items: T[];
  metadata?: { resourceVersion?: string; continue?: string };
}

export interface WatchOptions extends Selectors {
  resourceVersion: string;
  allowWatchBookmarks: boolean;
}

/** `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, or `ERROR` (then the object is a Status). */
export type WatchEventType = string;

export interface WatchHandle {
  abort(): void;
}

/** The two API calls an informer needs; `onEnd` is called once when the watch ends, with or without error. */
export interface ListWatch<T> {
  list(options: ListOptions): Promise<ListPage<T>>;
  watch(
    options: WatchOptions,
    onEvent: (type: WatchEventType, object: unknown) => void,
    onEnd: (err: unknown) => void,
  ): Promise<WatchHandle>;
}

/** A list that takes longer than this is treated as failed (and retried with backoff). */
const LIST_TIMEOUT_MS = 60_000;

/**
 * Why a watch lives long and resumes cheaply: the API server sends a BOOKMARK (the newest
 * resourceVersion, no object) to a watch that allows them about once a minute, and right before the
 * watch's own timeout. client-node's Watch aborts a watch after 30 s without a byte, which came
 * before the first bookmark: a quiet or selector-filtered watch (a label-selected ConfigMap cache,
 * the live pods) was cut every 30 s and resumed from the resourceVersion of the last object it had
 * seen, which the API server's watch cache had often dropped by then (busy kinds roll it over in
 * seconds), so the resume answered 410 and the informer listed everything again. With an inactivity
 * limit above the bookmark period, and a server-side timeout (5 to 10 minutes, spread as client-go's
 * reflector does) that ends the watch cleanly just after a bookmark, a watch resumes from a fresh
 * resourceVersion and a 410 is left for real gaps (etcd compaction, an API server restart).
 */
const WATCH_INACTIVITY_MS = 90_000;
const WATCH_TIMEOUT_MIN_SECONDS = 300;

/** 5 to 10 minutes, spread so the watches of one process do not all restart together. */
export function watchTimeoutSeconds(random: () => number = Math.random): number {
  return WATCH_TIMEOUT_MIN_SECONDS + Math.floor(random() * WATCH_TIMEOUT_MIN_SECONDS);
}

/** Path of a custom resource list, cluster-wide or in one namespace. */
export function customResourcePath(group: string, version: string, plural: string, namespace?: string): string {
  return namespace
    ? `/apis/${group}/${version}/namespaces/${namespace}/${plural}`
    : `/apis/${group}/${version}/${plural}`;
}

export function apiListWatch<T extends KubernetesObject>(kc: KubeConfig, path: string): ListWatch<T> {
  const watcher = new Watch(kc);
  // client-node keeps the inactivity limit in a field its typings mark private (watch.js sets it in
  // the constructor and reads it on every chunk); there is no option for it.
  (watcher as unknown as { requestTimeoutMs: number }).requestTimeoutMs = WATCH_INACTIVITY_MS;
  return {
    list: (options) => {
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(options))
        if (value !== undefined && value !== '') query.set(key, String(value));
      const suffix = query.size > 0 ? `?${query.toString()}` : '';
      return getJson<ListPage<T>>(kc, `${path}${suffix}`, LIST_TIMEOUT_MS);
    },
    watch: async (options, onEvent, onEnd) =>
      watcher.watch(
        path,
        { ...options, timeoutSeconds: watchTimeoutSeconds() },
        (type: string, object: unknown) => onEvent(type, object),
        onEnd,
      ),
  };
}
