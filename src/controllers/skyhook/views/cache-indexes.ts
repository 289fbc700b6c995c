/**
 * The Skyhook controller's informer indexes (kube/informer-store.ts): which nodes carry an SCR's
 * wait and gate marks, the ConfigMaps an SCR owns, its stage NodeOps, and the pods bound to each
 * node. The reconciler asks them instead of scanning every node, ConfigMap, NodeOp or pod of the
 * cluster on each reconcile; skyhook-controller.ts adds them when it makes the caches.
 */
import type { V1ConfigMap, V1Node, V1Pod } from '@kubernetes/client-node';
import { CHILD_ANNOTATIONS, NODE_ANNOTATION_PREFIXES } from '../../../api/names.js';
import type { NodeOp } from '../../../api/nodeop.js';
import type { SkyhookCaches } from '../context.js';

/** Nodes by each `waiting_<scr>`, `nonInterruptWaitSince_<scr>` and `healthGate_<scr>` annotation key they carry. */
export const NODES_BY_MARK = 'skyhook/node-marks';
/** Package and node-metadata ConfigMaps by the SCR that owns them (`CHILD_ANNOTATIONS.name`). */
export const CONFIGMAPS_BY_SKYHOOK = 'skyhook/configmap-owner';
/** Stage NodeOps by their SCR (`spec.skyhookStage.skyhook`). */
export const NODEOPS_BY_SKYHOOK = 'skyhook/stage-op-owner';
/** Cached pods (live, bound) by node name. */
export const PODS_BY_NODE = 'skyhook/pod-node';

const MARK_PREFIXES = [
  NODE_ANNOTATION_PREFIXES.waiting,
  NODE_ANNOTATION_PREFIXES.nonInterruptWaitSince,
  NODE_ANNOTATION_PREFIXES.healthGate,
];

export function nodeMarks(node: V1Node): string[] {
  return Object.keys(node.metadata?.annotations ?? {}).filter((key) =>
    MARK_PREFIXES.some((prefix) => key.startsWith(prefix)),
  );
}

export function configMapOwner(cm: V1ConfigMap): string[] {
  const owner = cm.metadata?.annotations?.[CHILD_ANNOTATIONS.name];
  return owner ? [owner] : [];
}

export function stageOpOwner(op: NodeOp): string[] {
  const owner = op.spec?.skyhookStage?.skyhook;
  return owner ? [owner] : [];
}

export function podNode(pod: V1Pod): string[] {
  const node = pod.spec?.nodeName;
  return node ? [node] : [];
}

/** Adds every index above to its cache (idempotent: informers shared with other controllers keep one). */
export function addSkyhookIndexes(caches: SkyhookCaches): void {
  caches.nodes.addIndex(NODES_BY_MARK, nodeMarks);
  caches.configMaps.addIndex(CONFIGMAPS_BY_SKYHOOK, configMapOwner);
  caches.nodeMetadata.addIndex(CONFIGMAPS_BY_SKYHOOK, configMapOwner);
  caches.nodeOps.addIndex(NODEOPS_BY_SKYHOOK, stageOpOwner);
  caches.pods.addIndex(PODS_BY_NODE, podNode);
}
