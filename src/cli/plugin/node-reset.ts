/**
 * What upstream's `reset` and `node reset` take off a node for one Skyhook: its per-SCR annotations
 * (nodeState_, status_, version_, cordon_, and our drain bookkeeping), the status_ label, and the
 * autoTaint_ markers. The operator then starts the node from scratch. Pure, so --dry-run shows the
 * exact patch.
 */
import type { V1Node } from '@kubernetes/client-node';
import { nodeAnnotations, NODE_ANNOTATION_PREFIXES, nodeLabels } from '../../api/names.js';
import type { Change } from './changes.js';
import { nameOf } from '../../api/object-meta.js';

export function resettableAnnotations(node: V1Node, skyhook: string): string[] {
  const annotations = node.metadata?.annotations ?? {};
  const perSkyhook = [
    nodeAnnotations.nodeState,
    nodeAnnotations.nodeStateCopy,
    nodeAnnotations.status,
    nodeAnnotations.version,
    nodeAnnotations.cordon,
    nodeAnnotations.drainStart,
    nodeAnnotations.drainBlocked,
  ]
    .map((key) => key(skyhook))
    .filter((key) => annotations[key] !== undefined);
  const autoTaint = Object.keys(annotations)
    .filter((key) => key.startsWith(NODE_ANNOTATION_PREFIXES.autoTaint))
    .sort();
  return [...perSkyhook, ...autoTaint];
}

/** The merge patch that resets `node` for `skyhook`, or undefined when nothing of it is there. */
export function nodeResetChange(node: V1Node, skyhook: string): Change | undefined {
  const name = nameOf(node);
  const annotations = resettableAnnotations(node, skyhook);
  const label = nodeLabels.status(skyhook);
  const hasLabel = node.metadata?.labels?.[label] !== undefined;
  if (annotations.length === 0 && !hasLabel) return undefined;
  const metadata: { annotations?: Record<string, null>; labels?: Record<string, null> } = {};
  if (annotations.length > 0) metadata.annotations = Object.fromEntries(annotations.map((key) => [key, null]));
  if (hasLabel) metadata.labels = { [label]: null };
  const removed = [...annotations.map((key) => `annotation ${key}`), ...(hasLabel ? [`label ${label}`] : [])];
  return { target: { kind: 'Node', name }, patch: { metadata }, description: `remove ${removed.join(', ')}` };
}
