/**
 * The real ListWatch behind an Informer: a paged GET of a list path and client-node's Watch on
 * the same path, both with the informer's selectors. Paths are API list URLs, e.g.
 * `/api/v1/nodes`, `/api/v1/namespaces/ns/configmaps`, `/apis/batch/v1/jobs` (all namespaces).
 */
import { Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { ListPage, ListWatch } from './informer.js';
import { getJson } from './wait.js';

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
