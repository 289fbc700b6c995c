/** The planner's view of a Node, made from the cache's client object (the planner never sees V1Node). */
import type { V1Node } from '@kubernetes/client-node';
import type { NodeView, PodView } from '../plan/planner-types.js';
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

/**
 * The views of one reconciler, kept while their objects are: incremental planning (plan/plan-cache.ts)
 * reuses a node's results while its view is the same object, and an informer keeps a node's object
 * until the node changes. A view with pods is kept while the node and its pods' views are unchanged.
 */
export class NodeViewMemo {
  private views = new WeakMap<V1Node, NodeView>();
  private withPods = new Map<string, { base: NodeView; podsKey: string; view: NodeView }>();

  /** The view of `node` (the previous one if `node` is the same object). */
  view(node: V1Node): NodeView {
    let view = this.views.get(node);
    if (view === undefined) {
      view = nodeViewOf(node);
      this.views.set(node, view);
    }
    return view;
  }

  /** The views of `nodes`, with `pods` on those `podsOf` gives pods for (undefined: none). */
  viewsWithPods(nodes: V1Node[], podsOf: (node: string) => PodView[] | undefined): NodeView[] {
    const next = new Map<string, { base: NodeView; podsKey: string; view: NodeView }>();
    const views = nodes.map((node) => {
      const base = this.view(node);
      const pods = podsOf(base.name);
      if (pods === undefined) return base;
      const podsKey = JSON.stringify(pods);
      const old = this.withPods.get(base.name);
      const kept = old !== undefined && old.base === base && old.podsKey === podsKey ? old : undefined;
      const entry = kept ?? { base, podsKey, view: { ...base, pods } };
      next.set(base.name, entry);
      return entry.view;
    });
    this.withPods = next;
    return views;
  }
}
