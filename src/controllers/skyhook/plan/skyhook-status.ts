/**
 * The SCR's status as upstream shows it: the aggregate status from the node statuses, the printer
 * column fields, and the conditions (upstream's prefixed types, newer upstream's bare ones, and the
 * plain `Ready`), each keeping its lastTransitionTime while its status does not change.
 */
import type { Condition } from '../../../api/k8s-schemas.js';
import { legacyConditionType, nodeAnnotations, SKYHOOK_CONDITIONS } from '../../../api/names.js';
import type { SkyhookSpec } from '../../../api/skyhook.js';
import type { SkyhookStatusValue } from '../../../api/node-state.js';

/** Which status a mix of non-complete nodes shows: a failure first, then work, then what holds it. */
const AGGREGATE_ORDER: SkyhookStatusValue[] = [
  'erroring',
  'in_progress',
  'waiting',
  'blocked',
  'paused',
  'disabled',
  'unknown',
];

export interface AggregateInput {
  nodeStatus: Record<string, SkyhookStatusValue>;
  paused: boolean;
  disabled: boolean;
  /** Something keeps the whole SCR from running (invalid spec, missing policy). */
  blocked: boolean;
}

export function aggregateStatus({ nodeStatus, paused, disabled, blocked }: AggregateInput): SkyhookStatusValue {
  // One pass, no arrays: this runs on every pass over every targeted node.
  const pending = new Set<SkyhookStatusValue>();
  for (const node in nodeStatus) if (nodeStatus[node] !== 'complete') pending.add(nodeStatus[node]!);
  if (pending.size === 0 && !blocked) return 'complete';
  if (disabled) return 'disabled';
  if (paused) return 'paused';
  if (blocked) return 'blocked';
  return AGGREGATE_ORDER.find((status) => pending.has(status)) ?? 'unknown';
}

/** `name:version` of the spec packages, sorted, joined by `,` (the Packages printer column). */
export function packageList(spec: SkyhookSpec): string {
  return Object.entries(spec.packages ?? {})
    .map(([name, pkg]) => `${name}:${pkg.version}`)
    .sort()
    .join(',');
}

export function completeNodes(nodeStatus: Record<string, SkyhookStatusValue>): string {
  let complete = 0;
  let total = 0;
  for (const node in nodeStatus) {
    total++;
    if (nodeStatus[node] === 'complete') complete++;
  }
  return `${complete}/${total}`;
}

/** Upstream counts erroring nodes as in progress. */
export function nodesInProgress(nodeStatus: Record<string, SkyhookStatusValue>): number {
  let count = 0;
  for (const node in nodeStatus) if (nodeStatus[node] === 'in_progress' || nodeStatus[node] === 'erroring') count++;
  return count;
}

const READY_REASONS: Partial<Record<SkyhookStatusValue, string>> = {
  complete: 'NodesConverged',
  in_progress: 'Progressing',
  blocked: 'Blocked',
  erroring: 'Erroring',
  paused: 'Paused',
  waiting: 'Waiting',
  disabled: 'Disabled',
};

const READY_BUCKETS: [SkyhookStatusValue, string][] = [
  ['in_progress', 'in progress'],
  ['blocked', 'blocked'],
  ['erroring', 'erroring'],
  ['waiting', 'waiting'],
  ['paused', 'paused'],
  ['disabled', 'disabled'],
  ['unknown', 'unknown'],
];

const NODE_LIST_LIMIT = 10;

function nodeList(names: string[]): string {
  return names.length > NODE_LIST_LIMIT
    ? ' (list truncated; see controller logs)'
    : ` (${[...names].sort().join(', ')})`;
}

/** `"2/3 nodes complete (a, b), 1 in progress (c)"`, as newer upstream words it. */
export function readyMessage(nodeStatus: Record<string, SkyhookStatusValue>): string {
  // One pass over the nodes (not one per status: at 5000 nodes this ran on every pass).
  const named = new Map<SkyhookStatusValue, string[]>();
  let total = 0;
  for (const node in nodeStatus) {
    total++;
    const status = nodeStatus[node]!;
    const list = named.get(status);
    if (list) list.push(node);
    else named.set(status, [node]);
  }
  const complete = named.get('complete') ?? [];
  let message = `${complete.length}/${total} nodes complete${complete.length > 0 ? nodeList(complete) : ''}`;
  for (const [status, words] of READY_BUCKETS) {
    const nodes = named.get(status) ?? [];
    if (nodes.length > 0) message += `, ${nodes.length} ${words}${nodeList(nodes)}`;
  }
  return message;
}

export interface ConditionValue {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export function readyCondition(
  status: SkyhookStatusValue,
  nodeStatus: Record<string, SkyhookStatusValue>,
): ConditionValue {
  return {
    type: SKYHOOK_CONDITIONS.ready,
    status: status === 'complete' ? 'True' : 'False',
    reason: READY_REASONS[status] ?? 'Unknown',
    message: readyMessage(nodeStatus),
  };
}

/** Upstream's prefixed Transition condition: True once complete, reason = the status. */
export function transitionCondition(
  previous: SkyhookStatusValue | undefined,
  status: SkyhookStatusValue,
  otherwise: string,
): ConditionValue {
  return {
    type: legacyConditionType(SKYHOOK_CONDITIONS.transition),
    status: status === 'complete' ? 'True' : 'False',
    reason: status,
    message: previous !== undefined && previous !== status ? `Transitioned [${previous}] -> [${status}]` : otherwise,
  };
}

/** `Node [a, b] <what>. Skipping.` or, with many nodes, `<n> nodes <what plural>. Skipping.` */
export function skippedNodesCondition(
  type: string,
  nodes: string[],
  what: { one: string; many: string; none: string },
): ConditionValue {
  if (nodes.length === 0) return { type, status: 'False', reason: type, message: what.none };
  const sorted = [...nodes].sort();
  const message =
    sorted.length > NODE_LIST_LIMIT
      ? `${sorted.length} nodes ${what.many}. Skipping.`
      : `Node [${sorted.join(', ')}] ${what.one}. Skipping.`;
  return { type, status: 'True', reason: type, message };
}

/**
 * `nodeState annotation cannot be parsed on 2 node(s): node-a, very-long-...` (at most five names),
 * then the fix; each node's `waiting_<scr>` annotation and Event say what is wrong with its value.
 */
export function malformedMessage(nodes: string[], skyhook: string): string {
  const sorted = [...nodes].sort();
  const shown = sorted.slice(0, 5).map((name) => (name.length > 10 ? `${name.slice(0, 10)}...` : name));
  const rest = sorted.length > 5 ? ` and ${sorted.length - 5} more` : '';
  const fix = `; fix or delete annotation ${nodeAnnotations.nodeState(skyhook)} on each (deleting it re-runs this Skyhook's packages there); the node's ${nodeAnnotations.waiting(skyhook)} annotation says what is wrong`;
  return `nodeState annotation cannot be parsed on ${sorted.length} node(s): ${shown.join(', ')}${rest}${fix}`;
}

/**
 * The new condition list: each wanted condition replaces the one of its type, keeping
 * lastTransitionTime when the status is unchanged; types in `remove` go; others are kept as they are.
 */
export function mergeConditions(
  existing: Condition[],
  wanted: ConditionValue[],
  remove: string[],
  now: string,
  generation: number | undefined,
): Condition[] {
  const byType = new Map(existing.map((condition) => [condition.type, condition]));
  for (const type of remove) byType.delete(type);
  for (const condition of wanted) {
    const previous = byType.get(condition.type);
    const lastTransitionTime = previous && previous.status === condition.status ? previous.lastTransitionTime : now;
    byType.set(condition.type, {
      ...condition,
      lastTransitionTime,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
    });
  }
  return [...byType.values()];
}

/** Newer upstream writes a bare type and mirrors it under the prefixed one for older tools. */
export function withLegacyMirror(condition: ConditionValue): ConditionValue[] {
  return [condition, { ...condition, type: legacyConditionType(condition.type) }];
}
