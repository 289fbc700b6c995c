/**
 * The mark of a NodeOp that reboots a node without cordoning it (`rebooting-by: <owner>`): a reboot
 * takes the node out of service whether or not it was cordoned, so every DisruptionBudget covering
 * the node counts it (`isDisrupted` in claims.ts) from before the Job starts until the NodeOp is done
 * with the node. Written under the node's resourceVersion like a cordon (node-patch.ts).
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import { NODEOP_NAMES } from '../../api/names.js';
import { patchNodeFromFresh } from '../node-patch.js';

/** Marks `node` as rebooted by the NodeOp `owner` (nothing to write when the mark is there). */
export async function markRebooting(core: CoreV1Api, node: string, owner: string): Promise<void> {
  await patchNodeFromFresh(core, node, (fresh) =>
    fresh.metadata?.annotations?.[NODEOP_NAMES.rebootingBy] === owner
      ? undefined
      : { metadata: { annotations: { [NODEOP_NAMES.rebootingBy]: owner } } },
  );
}

/** Removes the mark of `owner` from `node`; another NodeOp's mark stays. True when this call removed it. */
export async function unmarkRebooting(core: CoreV1Api, node: string, owner: string): Promise<boolean> {
  const written = await patchNodeFromFresh(core, node, (fresh) =>
    fresh.metadata?.annotations?.[NODEOP_NAMES.rebootingBy] === owner
      ? { metadata: { annotations: { [NODEOP_NAMES.rebootingBy]: null } } }
      : undefined,
  );
  return written !== undefined;
}
