/**
 * The drain of a node before its interrupt: the SCR's drainConfig as NodeOp drain options (newer
 * upstream's defaults made explicit, since the NodeOp's own defaults are kubectl's stricter ones),
 * and the pods that keep a drain from finishing, read from the stage op and summarised in newer
 * upstream's DrainBlocked condition.
 */
import type { DrainOptions } from '../../../api/nodeop.js';
import type { SkyhookSpec } from '../../../api/skyhook.js';
import { parseDurationMs } from '../../../util/duration.js';
import type { DrainBlocker } from './planner-types.js';

/**
 * Unset drainConfig keeps upstream v0.13's drain, which the defaults reproduce: evict everything
 * but DaemonSet pods, including unmanaged pods and pods with emptyDir data, with no deadline.
 */
export function stageDrainOptions(config: SkyhookSpec['drainConfig']): DrainOptions {
  const options: DrainOptions = {
    enabled: true,
    disableEviction: config?.disableEviction ?? false,
    deleteEmptyDirData: config?.deleteEmptyDirData ?? true,
    force: config?.force ?? true,
    ignoreDaemonSets: config?.ignoreDaemonSets ?? true,
  };
  const timeout = wholeSeconds(config?.timeout);
  if (timeout !== undefined && timeout > 0) options.timeoutSeconds = timeout;
  const grace = wholeSeconds(config?.gracePeriod);
  if (grace !== undefined) options.gracePeriodSeconds = grace;
  return options;
}

/** A duration rounded up to whole seconds; undefined when unset or unreadable (the API server validated it). */
function wholeSeconds(duration: string | null | undefined): number | undefined {
  if (duration === undefined || duration === null) return undefined;
  try {
    return Math.ceil(parseDurationMs(duration) / 1000);
  } catch {
    return undefined;
  }
}

/** A short reason for a blocking pod from the drain's wording of it. */
export function blockerReason(text: string): string {
  if (/disruption budget/i.test(text)) return 'PodDisruptionBudget';
  if (/not managed by a controller/i.test(text)) return 'UnmanagedPod';
  if (/emptyDir/i.test(text)) return 'EmptyDirData';
  if (/DaemonSet/i.test(text)) return 'DaemonSet';
  if (/terminating/i.test(text)) return 'Terminating';
  return 'NotEvicted';
}

/**
 * The blocking pods named in a NodeOp drain message (`… refused: ns/pod is <why>; …` or
 * `… still there: ns/pod (<why>), …`), for op summaries that carry no structured list.
 */
export function drainBlockersFromMessage(message: string | undefined): DrainBlocker[] {
  if (message === undefined || !message.startsWith('drain of node')) return [];
  const blockers: DrainBlocker[] = [];
  const refused = message.match(/ refused: (.*)$/);
  const pattern = refused ? /([a-z0-9.-]+)\/([a-z0-9.-]+) is ([^;]*)/g : /([a-z0-9.-]+)\/([a-z0-9.-]+) \(([^)]*)\)/g;
  for (const match of (refused?.[1] ?? message).matchAll(pattern)) {
    blockers.push({
      namespace: match[1]!,
      name: match[2]!,
      reason: blockerReason(match[3]!),
      detail: match[3]!.trim(),
    });
  }
  return blockers;
}

const DETAIL_LINES = 10;
const NODE_LIST_LIMIT = 10;

/**
 * Newer upstream's DrainBlocked condition: `<k>/<total> nodes blocked draining (names)` then one
 * `; <ns>/<pod> on <node>: <detail>` per pod (at most ten), reason the common cause or MultipleCauses.
 */
export function drainBlockedCondition(
  blockedNodes: Record<string, DrainBlocker[]>,
  total: number,
): { reason: string; message: string } | undefined {
  const nodes = Object.keys(blockedNodes)
    .filter((node) => blockedNodes[node]!.length > 0)
    .sort();
  if (nodes.length === 0) return undefined;
  const lines = nodes
    .flatMap((node) => blockedNodes[node]!.map((b) => `${b.namespace}/${b.name} on ${node}: ${b.detail ?? b.reason}`))
    .sort();
  const reasons = new Set(nodes.flatMap((node) => blockedNodes[node]!.map((b) => b.reason)));
  const names = nodes.length > NODE_LIST_LIMIT ? '(list truncated; see controller logs)' : `(${nodes.join(', ')})`;
  let message = `${nodes.length}/${total} nodes blocked draining ${names}`;
  for (const line of lines.slice(0, DETAIL_LINES)) message += `; ${line}`;
  if (lines.length > DETAIL_LINES) message += ' (additional detail truncated; see controller logs)';
  return { reason: reasons.size === 1 ? [...reasons][0]! : 'MultipleCauses', message };
}

/** `1 node blocked by non-interrupt pods (node-a). Waiting.` as newer upstream words the Blocked condition. */
export function nonInterruptBlockedMessage(nodes: string[], long: string[] = []): string {
  const list = (of: string[]): string => {
    const sorted = [...of].sort();
    return sorted.length > NODE_LIST_LIMIT ? '(list truncated; see controller logs)' : `(${sorted.join(', ')})`;
  };
  const count = (n: number): string => `${n} ${n === 1 ? 'node' : 'nodes'}`;
  const over =
    long.length === 0 ? '' : ` ${count(long.length)} waited longer than podNonInterruptWarnAfter ${list(long)}.`;
  return `${count(nodes.length)} blocked by non-interrupt pods ${list(nodes)}. Waiting.${over}`;
}
