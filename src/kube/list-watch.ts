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

/** Path of a custom resource list, cluster-wide or in one namespace. */
export function customResourcePath(group: string, version: string, plural: string, namespace?: string): string {
  return namespace
    ? `/apis/${group}/${version}/namespaces/${namespace}/${plural}`
    : `/apis/${group}/${version}/${plural}`;
}

export function apiListWatch<T extends KubernetesObject>(kc: KubeConfig, path: string): ListWatch<T> {
  const watcher = new Watch(kc);
  return {
    list: (options) => {
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(options))
        if (value !== undefined && value !== '') query.set(key, String(value));
      const suffix = query.size > 0 ? `?${query.toString()}` : '';
      return getJson<ListPage<T>>(kc, `${path}${suffix}`, LIST_TIMEOUT_MS);
    },
    watch: async (options, onEvent, onEnd) =>
      watcher.watch(path, { ...options }, (type: string, object: unknown) => onEvent(type, object), onEnd),
  };
}
