/**
 * Which informer caches each kind the write expectations name (write-expectations.ts), for the
 * reconcile's read-your-writes check: the lookup of an object by name, and how far that informer has
 * got (its lastSyncResourceVersion), which tells a deleted object from one the cache has not seen yet.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Informer } from '../../../kube/informer.js';
import type { SkyhookIo } from '../context.js';
import { NODE_METADATA_KIND } from './node-metadata-writes.js';
import type { CacheLookup, SyncedVersionLookup } from './write-expectations.js';

type Cache = Pick<Informer<KubernetesObject>, 'get' | 'lastSyncResourceVersion' | 'applyOwnWrite'>;

/** The informer of `kind` and the namespace its objects live in (none: cluster-scoped). */
function cacheOf(io: Pick<SkyhookIo, 'caches' | 'settings'>, kind: string): [Cache, string?] {
  const { caches, settings } = io;
  if (kind === 'Node') return [caches.nodes];
  if (kind === 'NodeOp') return [caches.nodeOps, settings.namespace];
  if (kind === 'ConfigMap') return [caches.configMaps, settings.namespace];
  if (kind === NODE_METADATA_KIND) return [caches.nodeMetadata, settings.namespace];
  return [caches.skyhooks];
}

export function expectationCaches(io: Pick<SkyhookIo, 'caches' | 'settings'>): [CacheLookup, SyncedVersionLookup] {
  return [
    (kind, name) => {
      const [informer, namespace] = cacheOf(io, kind);
      return informer.get(name, namespace);
    },
    (kind) => cacheOf(io, kind)[0].lastSyncResourceVersion,
  ];
}

/** Stores each written object in the cache of its kind at once (Informer.applyOwnWrite). */
export function writeThrough(
  io: Pick<SkyhookIo, 'caches' | 'settings'>,
): (kind: string, object: KubernetesObject) => void {
  return (kind, object) => {
    cacheOf(io, kind)[0].applyOwnWrite(object);
  };
}
