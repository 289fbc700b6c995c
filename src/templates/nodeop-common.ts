/** What a NodeOp's Jobs and reboot pods share: owner, labels, the sentinel volume. */
import type { V1OwnerReference, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { CHILD_LABELS, GROUP_VERSION, KINDS, NODEOP_NAMES } from '../api/names.js';
import type { NodeOp } from '../api/nodeop.js';
import { labelValue } from './object-names.js';
import { nameOf } from '../api/object-meta.js';

/** Controller reference: deleting the NodeOp garbage-collects its Jobs (and their pods) and reboot pods. */
export function nodeOpOwnerReference(nodeOp: NodeOp): V1OwnerReference {
  const { name, uid } = nodeOp.metadata;
  if (!name || !uid) throw new Error('a NodeOp read from the API server has a name and a uid; this one has not');
  return { apiVersion: GROUP_VERSION, kind: KINDS.nodeOp.kind, name, uid, controller: true, blockOwnerDeletion: true };
}

/**
 * Labels of a node's Job, its pods and the reboot pod, so `kubectl logs -l` finds one node's work:
 * the NodeOp and node always, then the NodeOp's `childLabels` (a Skyhook stage's: Skyhook, package,
 * stage). Ours are written first and again last: they keep their place and win over a childLabel
 * with the same key, since the controller finds its pods by them.
 */
export function nodeOpChildLabels(nodeOp: NodeOp, node: string): Record<string, string> {
  const own = {
    [NODEOP_NAMES.nodeOpLabel]: labelValue(nameOf(nodeOp)),
    [CHILD_LABELS.node]: labelValue(node),
  };
  return { ...own, ...nodeOp.spec.childLabels, ...own };
}

/** Where the sentinel directory appears inside the Job's sentinel container and the reboot pod. */
export const SENTINEL_MOUNT_PATH = '/sentinel';

export const sentinelVolume: V1Volume = {
  name: 'sentinel',
  // DirectoryOrCreate: whichever of the Job and the reboot pod starts first creates it.
  hostPath: { path: NODEOP_NAMES.sentinelHostDir, type: 'DirectoryOrCreate' },
};

export const sentinelMount: V1VolumeMount = { name: sentinelVolume.name, mountPath: SENTINEL_MOUNT_PATH };

/** POSIX shell quoting of one word. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
