/**
 * Cordon with ownership. Whoever cordons a node writes who it is into an annotation; uncordon
 * happens only when that annotation still names the same owner, so a node cordoned by a person, by
 * another NodeOp, or by an earlier NodeOp of the same name (another UID) is never uncordoned by us.
 * Writes carry the node's resourceVersion: a concurrent change makes them fail (retry) instead of
 * overwriting it.
 */
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import { NODEOP_NAMES } from '../api/names.js';
import { mergePatchNode } from '../kube/client.js';

/** The owner value of a NodeOp: `<namespace>/<name>@<uid>`. */
export function cordonOwner(ref: { namespace?: string; name?: string; uid?: string }): string {
  return `${ref.namespace ?? ''}/${ref.name ?? ''}@${ref.uid ?? ''}`;
}

export function cordonedBy(node: V1Node): string | undefined {
  return node.metadata?.annotations?.[NODEOP_NAMES.cordonedBy];
}

/** True when `owner` cordoned the node and it is still cordoned. */
export function isCordonedBy(node: V1Node, owner: string): boolean {
  return node.spec?.unschedulable === true && cordonedBy(node) === owner;
}

export type CordonOutcome = 'cordoned' | 'ours-already' | 'cordoned-by-someone-else';

/** Cordons `name` for `owner`; a node that is already cordoned is left as it is and not claimed. */
export async function cordonNode(core: CoreV1Api, name: string, owner: string): Promise<CordonOutcome> {
  const node = await core.readNode({ name });
  if (isCordonedBy(node, owner)) return 'ours-already';
  if (node.spec?.unschedulable) return 'cordoned-by-someone-else';
  await mergePatchNode(core, name, {
    metadata: { resourceVersion: node.metadata?.resourceVersion, annotations: { [NODEOP_NAMES.cordonedBy]: owner } },
    spec: { unschedulable: true },
  });
  return 'cordoned';
}

/**
 * Uncordons `name` if `owner` cordoned it. A leftover annotation of ours on a node that someone
 * already uncordoned is removed. Resolves true when the node was uncordoned.
 */
export async function uncordonNode(core: CoreV1Api, name: string, owner: string): Promise<boolean> {
  const node = await core.readNode({ name });
  if (cordonedBy(node) !== owner) return false;
  const resourceVersion = node.metadata?.resourceVersion;
  const dropAnnotation = { resourceVersion, annotations: { [NODEOP_NAMES.cordonedBy]: null } };
  if (!node.spec?.unschedulable) {
    await mergePatchNode(core, name, { metadata: dropAnnotation });
    return false;
  }
  await mergePatchNode(core, name, { metadata: dropAnnotation, spec: { unschedulable: false } });
  return true;
}
