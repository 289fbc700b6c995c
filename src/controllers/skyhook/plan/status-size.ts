/**
 * Keeps a Skyhook under the size etcd accepts. Its status lists every node three times (nodeState
 * with an entry per package, nodeStatus, nodePriority): about 210 bytes a node with one package and
 * short node names, 130 more per package, more with long cloud node names. etcd refuses a write
 * over its request limit (1.5 MiB by default), so past a few thousand nodes every status write
 * would fail and the status would stay as it was, however far the rollout went (docs/design/history.md).
 *
 * So when the per-node maps would take the object past OBJECT_BYTES_BUDGET, the status lists less,
 * in this order, as far as needed: nodeState without the nodes that are complete; nodePriority
 * without them too; no nodeState; no nodePriority. nodeStatus and the counts stay whole. Every
 * node's package states remain in its own annotation (skyhook.nvidia.com/nodeState_<skyhook>),
 * which is what the planner reads, and condition StatusTrimmed says what was left out and where
 * to look. Pure and deterministic: the next pass computes the same status, so nothing is rewritten.
 */
import type { NodeState, SkyhookStatusValue } from '../../../api/node-state.js';

/** The most the Skyhook object may take as JSON: below etcd's default 1.5 MiB, with room for the write's envelope. */
export const OBJECT_BYTES_BUDGET = 1_300_000;

/** What the status holds besides the per-node maps (conditions, counts, compartments): at most this, counted up front. */
const REST_OF_STATUS_BYTES = 64 * 1024;

export interface NodeMaps {
  nodeState: Record<string, NodeState>;
  nodeStatus: Record<string, SkyhookStatusValue>;
  nodePriority: Record<string, string>;
}

export interface StatusTrim {
  /** Nodes listed in nodeState, of those with package states. */
  nodeStateListed: number;
  nodeStateOf: number;
  /** Nodes listed in nodePriority, of those with a priority (cut after nodeState, when that was not enough). */
  nodePriorityListed: number;
  nodePriorityOf: number;
  /** The object's size with every map whole, and the budget it had to fit. */
  fullBytes: number;
  budgetBytes: number;
}

/**
 * JSON sizes of the package-state objects measured so far, by identity: where incremental planning
 * hands an unchanged node the same state object again (plan-cache.ts), it is not serialized again.
 * Only ever a cache: a new object is measured afresh.
 */
const measured = new WeakMap<object, number>();

function jsonBytes(value: unknown): number {
  if (typeof value !== 'object' || value === null) return Buffer.byteLength(JSON.stringify(value));
  let bytes = measured.get(value);
  if (bytes === undefined) {
    bytes = Buffer.byteLength(JSON.stringify(value));
    measured.set(value, bytes);
  }
  return bytes;
}

/**
 * JSON size of one map entry, `"key":value,`. Keys are node names and string values are status
 * words and RFC 3339 times: ASCII that JSON never escapes, so their size is their length.
 */
function entryBytes(key: string, value: unknown): number {
  return key.length + 4 + (typeof value === 'string' ? value.length + 2 : jsonBytes(value));
}

/** A map's JSON size, whole and over the nodes that are not complete only. */
function mapBytes(
  map: Record<string, unknown>,
  nodeStatus: NodeMaps['nodeStatus'],
): { all: number; notComplete: number } {
  let all = 2;
  let notComplete = 2;
  for (const node in map) {
    const bytes = entryBytes(node, map[node]);
    all += bytes;
    if (nodeStatus[node] !== 'complete') notComplete += bytes;
  }
  return { all, notComplete };
}

function only<V>(map: Record<string, V>, keep: (node: string) => boolean): Record<string, V> {
  return Object.fromEntries(Object.entries(map).filter(([node]) => keep(node)));
}

/** JSON size of the Skyhook without its status (its metadata, with kubectl's last-applied copy, and spec). */
export function objectBytesWithoutStatus(object: { metadata?: unknown; spec?: unknown }): number {
  return Buffer.byteLength(JSON.stringify({ metadata: object.metadata, spec: object.spec }));
}

/**
 * The maps to write for an object whose metadata and spec take `objectBytes` (status apart):
 * whole when they fit, else cut as the module comment says, with what was cut.
 */
export function fitNodeMaps(
  maps: NodeMaps,
  objectBytes: number,
  budgetBytes: number = OBJECT_BYTES_BUDGET,
): { maps: NodeMaps; trim?: StatusTrim } {
  const state = mapBytes(maps.nodeState, maps.nodeStatus);
  const priority = mapBytes(maps.nodePriority, maps.nodeStatus);
  const fixed = objectBytes + REST_OF_STATUS_BYTES + mapBytes(maps.nodeStatus, maps.nodeStatus).all;
  const fullBytes = fixed + state.all + priority.all;
  if (fullBytes <= budgetBytes) return { maps };
  // What each map keeps, least cut first; the last choice is taken even if it does not fit.
  type Keep = 'all' | 'notComplete' | 'none';
  const choices: Array<[Keep, Keep]> = [
    ['notComplete', 'all'],
    ['notComplete', 'notComplete'],
    ['none', 'notComplete'],
    ['none', 'none'],
  ];
  const size = (bytes: { all: number; notComplete: number }, keep: Keep): number => (keep === 'none' ? 2 : bytes[keep]);
  const [keepState, keepPriority] =
    choices.find(([s, p]) => fixed + size(state, s) + size(priority, p) <= budgetBytes) ?? choices[choices.length - 1]!;
  const cut = <V>(map: Record<string, V>, keep: Keep): Record<string, V> =>
    keep === 'all' ? map : keep === 'none' ? {} : only(map, (node) => maps.nodeStatus[node] !== 'complete');
  const nodeState = cut(maps.nodeState, keepState);
  const nodePriority = cut(maps.nodePriority, keepPriority);
  return {
    maps: { nodeState, nodeStatus: maps.nodeStatus, nodePriority },
    trim: {
      nodeStateListed: Object.keys(nodeState).length,
      nodeStateOf: Object.keys(maps.nodeState).length,
      nodePriorityListed: Object.keys(nodePriority).length,
      nodePriorityOf: Object.keys(maps.nodePriority).length,
      fullBytes,
      budgetBytes,
    },
  };
}

/** The StatusTrimmed condition's message: what was left out, why, and where the rest is. */
export function trimMessage(trim: StatusTrim, skyhook: string): string {
  const mb = (bytes: number): string => `${(bytes / 1_000_000).toFixed(2)} MB`;
  const priority =
    trim.nodePriorityListed < trim.nodePriorityOf
      ? ` and nodePriority ${trim.nodePriorityListed} of ${trim.nodePriorityOf}`
      : '';
  return (
    `status.nodeState lists ${trim.nodeStateListed} of ${trim.nodeStateOf} nodes${priority} (complete nodes first left out): ` +
    `whole, the Skyhook would take ${mb(trim.fullBytes)}, over the ${mb(trim.budgetBytes)} kept below etcd's 1.5 MiB request limit; ` +
    `every node's package states are in its annotation skyhook.nvidia.com/nodeState_${skyhook} (kubectl skyhook node status)`
  );
}
