/**
 * Which nodes a NodeOp runs on and when (pure): the targets (selector or explicit list, control-plane
 * nodes first, then by name), and which of the not-yet-started targets may start now under
 * `concurrency` and `stopOnFailure`. Selection is evaluated on every reconcile, so nodes that start
 * matching later are picked up.
 */
import type { V1Node } from '@kubernetes/client-node';
import { KUBERNETES_NAMES } from '../../api/names.js';
import type { NodeOpNodeStatus, NodeOpSpec } from '../../api/nodeop.js';
import { selectorMatches } from '../../api/label-selector.js';
import { nameOf } from '../../api/object-meta.js';
import { compareText } from '../../util/compare.js';

const isControlPlane = (node: V1Node): boolean =>
  KUBERNETES_NAMES.controlPlaneLabels.some((label) => Object.hasOwn(node.metadata?.labels ?? {}, label));

/** Where targetNodesOf looks nodes up: the node cache. */
export interface NodeLookup {
  get(name: string): V1Node | undefined;
  list(): V1Node[];
}

/**
 * targetNodes over the node cache: an explicit list (every stage NodeOp: one node) is looked up by
 * name instead of scanning and sorting every node of the cluster; a selector still reads them all.
 */
export function targetNodesOf(spec: Pick<NodeOpSpec, 'nodeSelector' | 'targetNodes'>, nodes: NodeLookup): string[] {
  if (!spec.targetNodes) return targetNodes(spec, nodes.list());
  const listed = [...new Set(spec.targetNodes)].map((name) => nodes.get(name)).filter((n) => n !== undefined);
  return targetNodes(spec, listed);
}

export function targetNodes(spec: Pick<NodeOpSpec, 'nodeSelector' | 'targetNodes'>, nodes: V1Node[]): string[] {
  const listed = spec.targetNodes ? new Set(spec.targetNodes) : undefined;
  const matching = nodes.filter((node) => {
    const name = nameOf(node);
    return listed ? listed.has(name) : selectorMatches(spec.nodeSelector, node.metadata?.labels ?? {});
  });
  return matching
    .sort((a, b) => Number(isControlPlane(b)) - Number(isControlPlane(a)) || compareText(nameOf(a), nameOf(b)))
    .map((node) => nameOf(node));
}

/** A node occupies a concurrency slot from its start until its Job and its reboot are done. */
export function isInFlight(status: NodeOpNodeStatus): boolean {
  switch (status.phase) {
    case 'Preflight':
    case 'Pending':
    case 'Running':
      return true;
    case 'Completed':
      return status.rebootStatus === 'pending';
    case 'Failed':
      return false;
  }
}

export interface PacingInput {
  targets: string[];
  statuses: Record<string, NodeOpNodeStatus>;
  /** Nodes whose Job exists and has not finished, whatever the status says (a stale status must not free a slot). */
  busyNodes: ReadonlySet<string>;
  concurrency: number;
  stopOnFailure: boolean;
}

export interface PacingDecision {
  start: string[];
  inFlight: number;
  /** Set when stopOnFailure holds back nodes: the failed node that stopped the NodeOp. */
  stoppedBy?: string;
  /** Targets never started (held back by concurrency or stopOnFailure). */
  waiting: string[];
}

export function planStarts({ targets, statuses, busyNodes, concurrency, stopOnFailure }: PacingInput): PacingDecision {
  const inFlightNodes = new Set([
    ...Object.entries(statuses)
      .filter(([, s]) => isInFlight(s))
      .map(([node]) => node),
    ...busyNodes,
  ]);
  const fresh = targets.filter((node) => !statuses[node]);
  const failed = Object.keys(statuses)
    .sort()
    .find((node) => statuses[node]?.phase === 'Failed');
  if (stopOnFailure && failed !== undefined)
    return { start: [], inFlight: inFlightNodes.size, stoppedBy: failed, waiting: fresh };
  const limit = concurrency > 0 ? concurrency : Number.POSITIVE_INFINITY;
  const slots = Math.max(0, limit - inFlightNodes.size);
  const start = fresh.slice(0, slots);
  return { start, inFlight: inFlightNodes.size, waiting: fresh.slice(start.length) };
}
