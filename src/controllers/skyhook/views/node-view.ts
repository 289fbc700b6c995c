/** The planner's view of a Node, made from the cache's client object (the planner never sees V1Node). */
import type { V1Node } from '@kubernetes/client-node';
import type { NodeView, PodView } from '../plan/planner-types.js';
import { nameOf } from '../../../api/object-meta.js';
import { sameJson } from '../../../util/json-equal.js';

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
 * reuses a node's results while its view is the same object. An informer replaces a node's object on
 * every update, status heartbeats included; the previous view is kept while what the planner reads of
 * the node (labels, annotations, taints, cordon) is unchanged. A view with pods is kept while the node
 * and its pods' views are unchanged.
 */
export class NodeViewMemo {
  private views = new WeakMap<V1Node, NodeView>();
  private last = new Map<string, NodeView>();
  private withPods = new Map<string, { base: NodeView; podsKey: string; view: NodeView }>();

  /** The views of `nodes` (the previous view of a node whose object or content is unchanged). */
  viewsOf(nodes: V1Node[]): NodeView[] {
    const next = new Map<string, NodeView>();
    const views = nodes.map((node) => {
      let view = this.views.get(node);
      if (view === undefined) {
        const fresh = nodeViewOf(node);
        const previous = this.last.get(fresh.name);
        view = previous !== undefined && sameJson(previous, fresh) ? previous : fresh;
        this.views.set(node, view);
      }
      next.set(view.name, view);
      return view;
    });
    this.last = next;
    return views;
  }

  /** The views of `nodes`, with `pods` on those `podsOf` gives pods for (undefined: none). */
  viewsWithPods(nodes: V1Node[], podsOf: (node: string) => PodView[] | undefined): NodeView[] {
    const next = new Map<string, { base: NodeView; podsKey: string; view: NodeView }>();
    const views = this.viewsOf(nodes).map((base) => {
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
