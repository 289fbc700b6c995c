/**
 * Writes of the per-node metadata ConfigMaps (node-metadata.ts builds them): ensured right before a
 * stage NodeOp is created on the node, so its Job always mounts the node's current labels,
 * annotations and the SCR's packages; deleted once the SCR no longer targets the node.
 *
 * Upstream also rewrites them on every node change. We do not: with the per-stage bookkeeping keys
 * left out, what a package reads can only have changed through someone else's edit of the node or
 * the SCR, and a package reads it only when a stage runs, which is when it is ensured. One write per
 * change and stage at most, and none at all for a node that has nothing to do. Deleting the SCR
 * leaves them to the garbage collector (the SCR is their controller owner), as upstream does.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Skyhook } from '../../api/skyhook.js';
import { isAlreadyExists, isNotFound } from '../../kube/client.js';
import { selectorMatches } from './node-eligibility.js';
import { buildNodeMetadataConfigMap, sameData, staleNodeMetadataConfigMaps } from './node-metadata.js';
import type { SkyhookIo } from './skyhook-io.js';

/**
 * The kind these writes are noted under in the WriteExpectations: their own cache (the package
 * ConfigMaps' one selects by another label), which the reconciler's lookup and the controller's
 * wake-ups know by this name.
 */
export const NODE_METADATA_KIND = 'NodeMetadataConfigMap';

/** Creates the node's ConfigMap for this SCR, or replaces it when its data differs; nothing when equal. */
export async function ensureNodeMetadata(io: SkyhookIo, skyhook: Skyhook, nodeName: string): Promise<void> {
  const { clients, caches, settings, expectations } = io;
  const namespace = settings.namespace;
  const node = caches.nodes.get(nodeName);
  // The planner plans only nodes in this cache; a node deleted since gets no Job that could mount it.
  if (!node) return;
  const body = buildNodeMetadataConfigMap(skyhook, node, namespace, settings.agentImage);
  const name = body.metadata!.name!;
  const cached = caches.nodeMetadata.get(name, namespace);
  if (cached && sameData(cached, body.data ?? {})) return;
  let written: V1ConfigMap;
  // An unconditional replace (no resourceVersion; ConfigMaps allow it): this SCR's reconciles are
  // serialized and nobody else writes the object, so the last write is the wanted one. A stale cache
  // costs at most one redundant write, which the API server turns into a no-op.
  if (cached) {
    try {
      written = await clients.core.replaceNamespacedConfigMap({ name, namespace, body });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      written = await clients.core.createNamespacedConfigMap({ namespace, body });
    }
  } else {
    try {
      written = await clients.core.createNamespacedConfigMap({ namespace, body });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      written = await clients.core.replaceNamespacedConfigMap({ name, namespace, body });
    }
  }
  io.logger.debug({ configMap: name, node: nodeName }, 'node metadata ConfigMap written');
  expectations.wrote(NODE_METADATA_KIND, written);
}

/** Deletes this SCR's node-metadata ConfigMaps of nodes it no longer targets or that no longer exist. */
export async function deleteStaleNodeMetadata(io: SkyhookIo, skyhook: Skyhook): Promise<void> {
  const { clients, caches, settings, expectations } = io;
  const namespace = settings.namespace;
  const targeted = new Set(caches.nodes.list()
    .filter((node) => selectorMatches(skyhook.spec.nodeSelectors, node.metadata?.labels ?? {}))
    .map((node) => node.metadata?.name ?? ''));
  for (const cm of staleNodeMetadataConfigMaps(caches.nodeMetadata.list(namespace), skyhook, targeted)) {
    const name = cm.metadata?.name ?? '';
    try {
      await clients.core.deleteNamespacedConfigMap({ name, namespace });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    expectations.deleted(NODE_METADATA_KIND, name);
  }
}
