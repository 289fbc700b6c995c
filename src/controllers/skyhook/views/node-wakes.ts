/**
 * Which SCRs a node's update can move. With several SCRs over the same nodes every node write of one
 * SCR (its state, its status label, its `waiting_` annotation) used to wake every SCR, and each woken
 * SCR plans itself and every SCR before it: 5 SCRs made about 4 Skyhook reconciles per node-stage
 * where one SCR makes 1. An SCR's own per-node keys are read by that SCR; the SCRs after it read
 * only whether it is complete on the node (the priority gates, plan/priority-gates.ts), which its
 * `status_<scr>` says: so they wake only when that turns complete or stops being complete. Waking
 * them on every state write of an earlier SCR cost a full plan each (1000 nodes x 5 SCRs: 5644
 * plans of about 200 ms in 8 minutes).
 * Anything else (labels, taints, cordons, keys that are not one SCR's), or SCRs that share cluster
 * budgets or a runtime-required taint (their plans read every SCR's state), still wakes every SCR.
 */
import type { V1Node } from '@kubernetes/client-node';
import { NODE_ANNOTATION_PREFIXES, nodeAnnotations } from '../../../api/names.js';
import { nameOf } from '../../../api/object-meta.js';
import type { Skyhook } from '../../../api/skyhook.js';
import { comparePriority } from '../plan/planner.js';

/** Per-SCR node keys read by that SCR and the SCRs after it only (annotations; `status_` also a label). */
const OWN_FAMILIES = [
  nodeAnnotations.nodeState(''),
  nodeAnnotations.nodeStateCopy(''),
  nodeAnnotations.status(''),
  nodeAnnotations.version(''),
  nodeAnnotations.recordedOps(''),
  nodeAnnotations.drainStart(''),
  nodeAnnotations.drainBlocked(''),
  nodeAnnotations.nonInterruptWaitSince(''),
  nodeAnnotations.healthGate(''),
];

/** Keys whose changes only the SCR itself reads. */
const REPORT_ONLY = NODE_ANNOTATION_PREFIXES.waiting;

/** The family (annotation and label) that says whether the SCR is complete on the node. */
const STATUS = nodeAnnotations.status('');

/** Whether `key` says complete in `labels` or `annotations` (a status key may be either). */
function says(node: V1Node, key: string): boolean {
  return node.metadata?.labels?.[key] === 'complete' || node.metadata?.annotations?.[key] === 'complete';
}

export const EVERY_SKYHOOK = 'every';

/** Keys of `a` and `b` whose values differ. */
function changedKeys(a: Record<string, string> | undefined, b: Record<string, string> | undefined): string[] {
  const changed: string[] = [];
  const left = a ?? {};
  const right = b ?? {};
  for (const key in left) if (left[key] !== right[key]) changed.push(key);
  for (const key in right) if (!(key in left)) changed.push(key);
  return changed;
}

function sameTaints(node: V1Node, old: V1Node): boolean {
  return JSON.stringify(node.spec?.taints ?? []) === JSON.stringify(old.spec?.taints ?? []);
}

/**
 * The SCRs to wake for a node's update that changed its metadata or spec (a status-only update is
 * the caller's: it wakes nobody unless a reconcile waits to see it), or EVERY_SKYHOOK.
 */
export function nodeUpdateWakes(node: V1Node, old: V1Node, skyhooks: Skyhook[]): string[] | typeof EVERY_SKYHOOK {
  if (!sameTaints(node, old) || (node.spec?.unschedulable === true) !== (old.spec?.unschedulable === true))
    return EVERY_SKYHOOK;
  // Their plans read every SCR's state on a node: the cluster budgets' ledger is shared in both
  // directions and the runtime-required taint goes when all of its SCRs are complete.
  if (skyhooks.some((scr) => scr.spec.runtimeRequired === true)) return EVERY_SKYHOOK;
  const byName = new Map(skyhooks.map((scr) => [nameOf(scr), scr]));
  const woken = new Set<string>();
  /** Earliest (in priority order) SCR whose completion on the node changed: it and every SCR after it wake. */
  let earliest: Skyhook | undefined;
  const keys = [
    ...changedKeys(node.metadata?.labels, old.metadata?.labels),
    ...changedKeys(node.metadata?.annotations, old.metadata?.annotations),
  ];
  for (const key of keys) {
    if (key.startsWith(REPORT_ONLY) && byName.has(key.slice(REPORT_ONLY.length))) {
      woken.add(key.slice(REPORT_ONLY.length));
      continue;
    }
    const family = OWN_FAMILIES.find((prefix) => key.startsWith(prefix));
    const scr = family === undefined ? undefined : byName.get(key.slice(family.length));
    if (scr === undefined) return EVERY_SKYHOOK;
    woken.add(nameOf(scr));
    const completionChanged = family === STATUS && says(node, key) !== says(old, key);
    if (completionChanged && (earliest === undefined || comparePriority(scr, earliest) < 0)) earliest = scr;
  }
  if (earliest !== undefined) {
    const first = earliest;
    for (const scr of skyhooks) if (comparePriority(scr, first) >= 0) woken.add(nameOf(scr));
  }
  return [...woken];
}
