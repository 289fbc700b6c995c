/**
 * The Skyhook controller's writes to a node's schedulability: its cordon claims and taints. Cordon
 * and taint decisions depend on what the node looks like at write time (another SCR may have
 * released its claim a moment ago, a person may have cordoned it), so each write reads the node
 * fresh and decides again (jobs/node-patch.ts); the cordon rules are the shared claims of
 * jobs/cordon/, the same the planner used.
 */
import type { CoreV1Api, V1Node, V1Taint } from '@kubernetes/client-node';
import { sharedClaim } from '../../../jobs/cordon/claims.js';
import { claimCordon, releaseCordon } from '../../../jobs/cordon/write.js';
import { patchNodeFromFresh } from '../../../jobs/node-patch.js';
import type { TaintView } from '../plan/planner-types.js';

/**
 * Reads and decisions on a conflict before giving up (the reconcile then retries with backoff):
 * SCRs release their claims on the same node concurrently, so a conflict is decided again at once.
 */
const CONFLICT_ATTEMPTS = 5;

const patchFromFresh = (core: CoreV1Api, name: string, decide: (node: V1Node) => object | undefined) =>
  patchNodeFromFresh(core, name, decide, CONFLICT_ATTEMPTS);

/**
 * Cordons the node under the shared `claim`. A node someone else cordoned without any claim (a
 * person, a NodeOp) stays theirs: we work under that cordon and record no claim, so we never lift it.
 */
export async function cordonWithClaim(core: CoreV1Api, name: string, claim: string): Promise<V1Node | undefined> {
  return (await claimCordon(core, name, sharedClaim(claim), { conflictAttempts: CONFLICT_ATTEMPTS })).written;
}

/** Drops `claim`; uncordons only when no other claim holds the node (see cordonAfterRelease). */
export async function releaseCordonClaim(core: CoreV1Api, name: string, claim: string): Promise<V1Node | undefined> {
  return (await releaseCordon(core, name, sharedClaim(claim), { conflictAttempts: CONFLICT_ATTEMPTS })).written;
}

const sameTaint = (a: V1Taint, b: TaintView): boolean => a.key === b.key && a.effect === b.effect;

/** Adds `taint` unless one with its key and effect is there; `annotations` go in the same patch. */
export function addTaint(
  core: CoreV1Api,
  name: string,
  taint: TaintView,
  annotations: Record<string, string> = {},
): Promise<V1Node | undefined> {
  return patchFromFresh(core, name, (node) => {
    const taints = node.spec?.taints ?? [];
    if (taints.some((t) => sameTaint(t, taint))) return undefined;
    // A merge patch replaces the whole list: the list as read, plus ours, under the read resourceVersion.
    return {
      metadata: { annotations },
      spec: {
        taints: [
          ...taints,
          { key: taint.key, ...(taint.value !== undefined ? { value: taint.value } : {}), effect: taint.effect },
        ],
      },
    };
  });
}

/** Removes the taint with this key, value and effect, if it is still there. */
export function removeTaint(core: CoreV1Api, name: string, taint: TaintView): Promise<V1Node | undefined> {
  return patchFromFresh(core, name, (node) => {
    const taints = node.spec?.taints ?? [];
    const kept = taints.filter((t) => !(sameTaint(t, taint) && (t.value ?? '') === (taint.value ?? '')));
    return kept.length === taints.length ? undefined : { spec: { taints: kept } };
  });
}
