/**
 * The waits the node annotations record for one SCR, as its metrics report them: each held node's
 * wait reason (`waiting_<scr>`) and when non-interruptible pods started holding it
 * (`nonInterruptWaitSince_<scr>`). Read through the node cache's index of marked nodes, not a scan.
 */
import type { V1Node } from '@kubernetes/client-node';
import { nodeAnnotations } from '../../../api/names.js';
import { nameOf } from '../../../api/object-meta.js';
import type { Informer } from '../../../kube/informer.js';
import { NODES_BY_MARK } from './cache-indexes.js';

/** The wait reason of each node the SCR holds, from its `waiting_<scr>` annotation (`<Reason>: <detail>`). */
export function waitReasons(nodes: Informer<V1Node>, name: string): Map<string, string> {
  const key = nodeAnnotations.waiting(name);
  const reasons = new Map<string, string>();
  for (const node of nodes.byIndex(NODES_BY_MARK, key)) {
    const value = node.metadata?.annotations?.[key];
    if (value) reasons.set(nameOf(node), value.split(':', 1)[0] ?? value);
  }
  return reasons;
}

/** When non-interruptible pods started holding each node of the SCR, from `nonInterruptWaitSince_<scr>`. */
export function podWaitStarts(nodes: Informer<V1Node>, name: string): Map<string, number> {
  const key = nodeAnnotations.nonInterruptWaitSince(name);
  const starts = new Map<string, number>();
  for (const node of nodes.byIndex(NODES_BY_MARK, key)) {
    const since = Date.parse(node.metadata?.annotations?.[key] ?? '');
    if (Number.isFinite(since)) starts.set(nameOf(node), since);
  }
  return starts;
}
