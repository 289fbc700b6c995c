/**
 * Writes of the per-node metadata ConfigMaps (node-metadata.ts builds them): ensured right before a
 * stage NodeOp is created on the node, so its Job always mounts the node's current labels,
 * annotations and the SCR's packages; deleted once the SCR no longer targets the node.
 *
 * Upstream also rewrites them on every node change; we write one only when a stage is about to
 * mount it and its data differs from what the ConfigMap holds. The data includes this SCR's own
 * node state, so that is one write per stage and node (the state that announces the stage is
 * written first, so the Job finds its own stage in progress), and none for a node that has nothing
 * to do. Deleting the SCR leaves them to the garbage collector (the SCR is their controller owner),
 * as upstream does.
 */
import type { V1Node } from '@kubernetes/client-node';
import { CHILD_ANNOTATIONS } from '../../../api/names.js';
import { nameOf } from '../../../api/object-meta.js';
import type { Skyhook } from '../../../api/skyhook.js';
import { createOrReplace, ignoreNotFound } from '../../../kube/writes.js';
import { selectorMatches } from '../../../api/label-selector.js';
import { buildNodeMetadataConfigMap, sameData, staleNodeMetadataConfigMaps } from '../build/node-metadata.js';
import { type SkyhookIo, writeLimitOf } from '../context.js';
import { CONFIGMAPS_BY_SKYHOOK } from '../views/cache-indexes.js';
import { runBounded } from './bounded-writes.js';

/**
 * The kind these writes are noted under in the WriteExpectations: their own cache (the package
 * ConfigMaps' one selects by another label), which the reconciler's lookup and the controller's
 * wake-ups know by this name.
 */
export const NODE_METADATA_KIND = 'NodeMetadataConfigMap';

/**
 * Creates the node's ConfigMap for this SCR, or replaces it when its data differs; nothing when
 * equal. `written` is the node as this pass's own write returned it, when there was one: newer than
 * the cache, which may not have seen that write yet.
 */
export async function ensureNodeMetadata(
  io: SkyhookIo,
  skyhook: Skyhook,
  nodeName: string,
  written?: V1Node,
): Promise<void> {
  const node = newer(io.caches.nodes.get(nodeName), written);
  // The planner plans only nodes in this cache; a node deleted since gets no Job that could mount it.
  if (node) await writeNodeMetadata(io, skyhook, node);
}

/**
 * Creates or replaces the ConfigMap of `node` as given (the node as written, or as a write in flight
 * will leave it: apply-steps.ts `withMetadataPreWrites`); nothing when the ConfigMap holds that already.
 */
export async function writeNodeMetadata(io: SkyhookIo, skyhook: Skyhook, node: V1Node): Promise<void> {
  const { clients, caches, settings, expectations } = io;
  const namespace = settings.namespace;
  const nodeName = nameOf(node);
  const body = buildNodeMetadataConfigMap(skyhook, node, namespace, settings.agentImage);
  const name = body.metadata!.name!;
  const cached = caches.nodeMetadata.get(name, namespace);
  if (cached && sameData(cached, body.data ?? {})) return;
  // An unconditional replace (no resourceVersion; ConfigMaps allow it): this SCR's reconciles are
  // serialized and nobody else writes the object, so the last write is the wanted one. A stale cache
  // costs at most one redundant write, which the API server turns into a no-op.
  const stored = await createOrReplace(
    {
      create: () => clients.core.createNamespacedConfigMap({ namespace, body }),
      replace: () => clients.core.replaceNamespacedConfigMap({ name, namespace, body }),
    },
    { exists: cached !== undefined },
  );
  io.logger.debug({ configMap: name, node: nodeName }, 'node metadata ConfigMap written');
  expectations.wrote(NODE_METADATA_KIND, stored);
}

/** The later of two versions of one node (etcd's resourceVersions are increasing integers). */
function newer(cached: V1Node | undefined, written: V1Node | undefined): V1Node | undefined {
  if (!cached || !written) return written ?? cached;
  const version = (node: V1Node): bigint => {
    const rv = node.metadata?.resourceVersion ?? '';
    return /^\d+$/.test(rv) ? BigInt(rv) : 0n;
  };
  return version(written) > version(cached) ? written : cached;
}

/**
 * Deletes this SCR's node-metadata ConfigMaps of nodes it no longer targets or that no longer exist,
 * concurrently (bounded-writes.ts). Only the SCR's own ConfigMaps are looked at (an index), and
 * only their nodes.
 */
export async function deleteStaleNodeMetadata(io: SkyhookIo, skyhook: Skyhook): Promise<void> {
  const { clients, caches, settings, expectations } = io;
  const namespace = settings.namespace;
  const ours = caches.nodeMetadata
    .byIndex(CONFIGMAPS_BY_SKYHOOK, nameOf(skyhook))
    .filter((cm) => cm.metadata?.namespace === namespace);
  const targeted = new Set<string>();
  for (const cm of ours) {
    const node = caches.nodes.get(cm.metadata?.annotations?.[CHILD_ANNOTATIONS.nodeName] ?? '');
    if (node && selectorMatches(skyhook.spec.nodeSelectors, node.metadata?.labels ?? {})) targeted.add(nameOf(node));
  }
  await runBounded(
    writeLimitOf(io),
    staleNodeMetadataConfigMaps(ours, skyhook, targeted).map((cm) => async () => {
      const name = nameOf(cm);
      await ignoreNotFound(clients.core.deleteNamespacedConfigMap({ name, namespace }));
      expectations.deleted(NODE_METADATA_KIND, name);
    }),
  );
}
