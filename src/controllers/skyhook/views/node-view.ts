/** The planner's view of a Node, made from the cache's client object (the planner never sees V1Node). */
import type { V1Node } from '@kubernetes/client-node';
import type { NodeView } from '../plan/planner-types.js';
import { nameOf } from '../../../api/object-meta.js';

/** The planner's view of a Node from the client's object. */
export function nodeViewOf(node: V1Node): NodeView {
  return {
    name: nameOf(node),
    createdAt: node.metadata?.creationTimestamp ? new Date(node.metadata.creationTimestamp).getTime() : 0,
    labels: node.metadata?.labels ?? {},
    annotations: node.metadata?.annotations ?? {},
    taints: (node.spec?.taints ?? []).map((taint) =>
      taint.value === undefined
        ? { key: taint.key, effect: taint.effect }
        : { key: taint.key, value: taint.value, effect: taint.effect },
    ),
    unschedulable: node.spec?.unschedulable === true,
  };
}
