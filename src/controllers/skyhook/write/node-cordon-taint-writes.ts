/**
 * The Skyhook controller's writes to a node's schedulability: cordon claims, the cordon itself,
 * taints, and plain annotations. Cordon and taint decisions depend on what the node looks like at
 * write time (another SCR may have released its claim a moment ago, a person may have cordoned it),
 * so each write reads the node fresh, decides with the same pure rules the planner used, and sends
 * one merge patch carrying that resourceVersion; a conflict means the node moved under us, and the
 * decision is made again on the newer node.
 */
import type { CoreV1Api, V1Node, V1Taint } from '@kubernetes/client-node';
import { isConflict, mergePatchNode } from '../../../kube/client.js';
import { cordonAfterRelease, isForeignCordon } from '../plan/cordon-claims.js';
import type { TaintView } from '../plan/planner-types.js';

/** Conflicts in a row before giving up (the reconcile then retries with backoff). */
const CONFLICT_ATTEMPTS = 5;

/**
 * Reads the node, lets `decide` turn it into a patch (undefined: nothing to write), and applies it
 * guarded by the node's resourceVersion, again on conflict. Resolves to the written node, if any.
 */
async function patchFromFresh(
  core: CoreV1Api,
  name: string,
  decide: (node: V1Node) => object | undefined,
): Promise<V1Node | undefined> {
  for (let attempt = 1; ; attempt++) {
    const node = await core.readNode({ name });
    const patch = decide(node) as { metadata?: object } | undefined;
    if (patch === undefined) return undefined;
    try {
      return await mergePatchNode(core, name, {
        ...patch,
        metadata: { ...patch.metadata, resourceVersion: node.metadata?.resourceVersion },
      });
    } catch (e) {
      if (!isConflict(e) || attempt >= CONFLICT_ATTEMPTS) throw e;
    }
  }
}

const annotationsOf = (node: V1Node): Record<string, string> => node.metadata?.annotations ?? {};

/**
 * Cordons the node under `claim`. A node someone else cordoned without any claim (a person, a
 * NodeOp) stays theirs: we work under that cordon and record no claim, so we never lift it.
 */
export function cordonWithClaim(core: CoreV1Api, name: string, claim: string): Promise<V1Node | undefined> {
  return patchFromFresh(core, name, (node) => {
    const view = { unschedulable: node.spec?.unschedulable === true, annotations: annotationsOf(node) };
    if (view.unschedulable && (Object.hasOwn(view.annotations, claim) || isForeignCordon(view))) return undefined;
    return { metadata: { annotations: { [claim]: 'true' } }, spec: { unschedulable: true } };
  });
}

/** Drops `claim`; uncordons only when no other claim holds the node (see cordonAfterRelease). */
export function releaseCordonClaim(core: CoreV1Api, name: string, claim: string): Promise<V1Node | undefined> {
  return patchFromFresh(core, name, (node) => {
    const release = cordonAfterRelease(
      { unschedulable: node.spec?.unschedulable === true, annotations: annotationsOf(node) },
      claim,
    );
    if (release.remove.length === 0 && !release.uncordon) return undefined;
    const metadata = { annotations: Object.fromEntries(release.remove.map((key) => [key, null])) };
    return release.uncordon ? { metadata, spec: { unschedulable: false } } : { metadata };
  });
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
