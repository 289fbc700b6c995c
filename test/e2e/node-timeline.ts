/**
 * When nodes were cordoned and uncordoned over a whole test, as a watch on nodes sees it: for
 * "never more than N cordoned at once" and for ordering a node's cordon against its Jobs and its
 * interrupt.
 */
import type { V1Node } from '@kubernetes/client-node';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import type { ClusterHandle } from './skyhook-cluster.js';
import { eventually } from './eventually.js';

export interface CordonSpan {
  node: string;
  /** Date.now() when the watch first saw the node unschedulable, and schedulable again. */
  from: number;
  to?: number;
}

export interface NodeTimeline {
  spans: CordonSpan[];
  /** Most of `nodes` seen cordoned at the same time. */
  maxCordoned(): number;
  spansOf(node: string): CordonSpan[];
  /**
   * Resolves once every span is closed (each node seen schedulable again), or after 10 s if some are
   * still open. The last uncordon of a rollout is written a step before the status a test waits for,
   * but this watch is not that one and may show it a moment later.
   */
  uncordoned(): Promise<void>;
  stop(): Promise<void>;
}

/** Records cordons of `nodes` (those cordoned when it starts count from then). */
export async function recordNodeTimeline(h: ClusterHandle, nodes: string[]): Promise<NodeTimeline> {
  const watched = new Set(nodes);
  const informer = new Informer<V1Node>(apiListWatch(h.cp.kubeConfig, '/api/v1/nodes'), {
    resource: 'node-timeline',
    logger: silentLogger(),
  });
  const spans: CordonSpan[] = [];
  const open = new Map<string, CordonSpan>();
  let max = 0;
  const seen = (node: V1Node): void => {
    const name = node.metadata?.name ?? '';
    if (!watched.has(name)) return;
    const cordoned = node.spec?.unschedulable === true;
    const span = open.get(name);
    if (cordoned && !span) {
      const started: CordonSpan = { node: name, from: Date.now() };
      spans.push(started);
      open.set(name, started);
    } else if (!cordoned && span) {
      span.to = Date.now();
      open.delete(name);
    }
    max = Math.max(max, open.size);
  };
  informer.on({ add: seen, update: seen });
  informer.start();
  await informer.waitForSync(30_000);
  return {
    spans,
    maxCordoned: () => max,
    spansOf: (node) => spans.filter((span) => span.node === node),
    uncordoned: async () => {
      await eventually(
        async () => open.size,
        (size) => size === 0,
      );
    },
    stop: () => informer.stop(),
  };
}

/** One value of a node annotation as a watch delivered it, with the node's resourceVersion then. */
export interface AnnotationValue {
  value: string | undefined;
  resourceVersion: number;
}

export interface AnnotationHistory {
  /** Every change of the annotation the watch delivered, in order (the first: its value at start). */
  values: AnnotationValue[];
  stop(): Promise<void>;
}

/**
 * Records every value `key` takes on `node`, from a watch rather than by sampling: a value held for a
 * moment between two polls cannot be missed. resourceVersions order the values against other writes
 * the test makes (e.g. the patch that should cause a change), with one clock: the API server's.
 */
export async function recordNodeAnnotation(h: ClusterHandle, node: string, key: string): Promise<AnnotationHistory> {
  const informer = new Informer<V1Node>(apiListWatch(h.cp.kubeConfig, '/api/v1/nodes'), {
    resource: 'node-annotation-history',
    logger: silentLogger(),
  });
  const values: AnnotationValue[] = [];
  const seen = (n: V1Node): void => {
    if (n.metadata?.name !== node) return;
    const value = n.metadata?.annotations?.[key];
    if (values.length > 0 && values.at(-1)!.value === value) return;
    values.push({ value, resourceVersion: Number(n.metadata?.resourceVersion ?? 0) });
  };
  informer.on({ add: seen, update: seen });
  informer.start();
  await informer.waitForSync(30_000);
  return { values, stop: () => informer.stop() };
}
