/**
 * Writes to a node that depend on what it looks like at write time (a cordon another claimer released
 * a moment ago, a taint someone added): read the node fresh, decide, and send one merge patch carrying
 * that resourceVersion, so a concurrent change makes the write fail instead of being overwritten.
 * Shared by the cordon claims (jobs/cordon/) and the Skyhook controller's taint writes.
 */
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import { isConflict, mergePatchNode } from '../kube/client.js';

/**
 * Reads the node, lets `decide` turn it into a merge patch (undefined: nothing to write), and applies
 * it guarded by the node's resourceVersion. On a conflict the node moved under us: up to
 * `conflictAttempts` reads and decisions in all, then the conflict is thrown (the caller's reconcile
 * retries). Resolves to the written node, if any.
 */
export async function patchNodeFromFresh(
  core: CoreV1Api,
  name: string,
  decide: (node: V1Node) => object | undefined,
  conflictAttempts = 1,
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
      if (!isConflict(e) || attempt >= conflictAttempts) throw e;
    }
  }
}
