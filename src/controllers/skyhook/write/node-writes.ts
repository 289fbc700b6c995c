/**
 * Writes of one SCR's state on a node: the `nodeState_`, `status_`, `version_` and `recordedOps_`
 * annotations, the `status_` label and the SCR's two node conditions, in one patch. Also the
 * cleanup when the SCR is deleted.
 */
import type { CoreV1Api, V1Node, V1NodeCondition } from '@kubernetes/client-node';
import { nodeAnnotations, nodeConditionTypes, nodeLabels } from '../../../api/names.js';
import { FIELD_MANAGER, mergePatchNode, STRATEGIC_MERGE_PATCH } from '../../../kube/client.js';
import { cordonClaim } from '../../../jobs/cordon/claims.js';
import { releaseCordonClaim } from './node-cordon-taint-writes.js';
import type { NodeConditionValue } from '../../../api/node-state.js';
import { nameOf } from '../../../api/object-meta.js';

export interface NodeWrite {
  node: string;
  /** Annotation and label values to set; `null` removes. */
  annotations: Record<string, string | null>;
  labels: Record<string, string | null>;
  conditions?: NodeConditionValue[];
}

/**
 * Applies `write` to the node as cached (`cached` gives the current conditions) in one request: a
 * strategic merge patch of the status subresource, which for nodes also keeps metadata changes (the
 * node status strategy resets only the spec), so annotations, labels and conditions land together.
 * Conditions merge by type, so other SCRs' conditions and the kubelet's are left alone.
 */
export async function applyNodeWrite(
  core: CoreV1Api,
  cached: V1Node | undefined,
  write: NodeWrite,
  now: Date,
): Promise<V1Node | undefined> {
  const metadata = Object.keys(write.annotations).length > 0 || Object.keys(write.labels).length > 0;
  const changed = (write.conditions ?? []).filter((wanted) => !sameCondition(cached, wanted));
  if (!metadata && changed.length === 0) return undefined;
  const body = {
    ...(metadata ? { metadata: { annotations: write.annotations, labels: write.labels } } : {}),
    ...(changed.length > 0
      ? { status: { conditions: changed.map((wanted) => conditionOf(cached, wanted, now)) } }
      : {}),
  };
  return core.patchNodeStatus({ name: write.node, body, fieldManager: FIELD_MANAGER }, STRATEGIC_MERGE_PATCH);
}

/** The node as `write` will leave it, as far as its labels and annotations go (`null` removes a key). */
export function nodeAfterWrite(node: V1Node, write: NodeWrite): V1Node {
  const merged = (
    current: Record<string, string> | undefined,
    changes: Record<string, string | null>,
  ): Record<string, string> => {
    const out = { ...current };
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) delete out[key];
      else out[key] = value;
    }
    return out;
  };
  return {
    ...node,
    metadata: {
      ...node.metadata,
      annotations: merged(node.metadata?.annotations, write.annotations),
      labels: merged(node.metadata?.labels, write.labels),
    },
  };
}

/**
 * Everything the SCR keeps on the node, removed (what `kubectl skyhook reset` would leave), and its
 * cordon released.
 */
export async function clearSkyhookFromNode(
  core: CoreV1Api,
  node: V1Node,
  skyhook: string,
): Promise<V1Node | undefined> {
  const name = nameOf(node);
  const annotations = Object.fromEntries(
    perSkyhookAnnotations(skyhook)
      .filter((key) => node.metadata?.annotations?.[key] !== undefined)
      .map((key) => [key, null]),
  );
  const labelKey = nodeLabels.status(skyhook);
  const labels = node.metadata?.labels?.[labelKey] !== undefined ? { [labelKey]: null } : {};
  let written: V1Node | undefined;
  if (Object.keys(annotations).length > 0 || Object.keys(labels).length > 0) {
    written = await mergePatchNode(core, name, { metadata: { annotations, labels } });
  }
  // The same rule as a completed node's release: uncordoned only if no other claim holds it.
  if (Object.hasOwn(node.metadata?.annotations ?? {}, cordonClaim(skyhook)))
    written = (await releaseCordonClaim(core, name, cordonClaim(skyhook))) ?? written;
  const types = new Set([nodeConditionTypes.notReady(skyhook), nodeConditionTypes.erroring(skyhook)]);
  const present = (node.status?.conditions ?? []).filter((c) => types.has(c.type));
  if (present.length > 0) {
    const conditions = present.map((c) => ({ type: c.type, $patch: 'delete' }));
    written = await core.patchNodeStatus(
      { name, body: { status: { conditions } }, fieldManager: FIELD_MANAGER },
      STRATEGIC_MERGE_PATCH,
    );
  }
  return written;
}

export function hasSkyhookTraces(node: V1Node, skyhook: string): boolean {
  const annotations = node.metadata?.annotations ?? {};
  const types = [nodeConditionTypes.notReady(skyhook), nodeConditionTypes.erroring(skyhook)];
  return (
    [...perSkyhookAnnotations(skyhook), cordonClaim(skyhook)].some((key) => annotations[key] !== undefined) ||
    node.metadata?.labels?.[nodeLabels.status(skyhook)] !== undefined ||
    (node.status?.conditions ?? []).some((c) => types.includes(c.type))
  );
}

/** The annotations one SCR keeps on a node besides its cordon claim (released by its own rule). */
function perSkyhookAnnotations(skyhook: string): string[] {
  return [
    nodeAnnotations.nodeState,
    nodeAnnotations.nodeStateCopy,
    nodeAnnotations.status,
    nodeAnnotations.version,
    nodeAnnotations.waiting,
    nodeAnnotations.nonInterruptWaitSince,
    nodeAnnotations.drainBlocked,
    nodeAnnotations.drainStart,
    nodeAnnotations.recordedOps,
    nodeAnnotations.healthGate,
  ].map((key) => key(skyhook));
}

function sameCondition(node: V1Node | undefined, wanted: NodeConditionValue): boolean {
  const current = node?.status?.conditions?.find((c) => c.type === wanted.type);
  return (
    current !== undefined &&
    current.status === wanted.status &&
    current.reason === wanted.reason &&
    current.message === wanted.message
  );
}

/** The transition time moves only when the status flips, as Kubernetes conditions do. */
function conditionOf(node: V1Node | undefined, wanted: NodeConditionValue, now: Date): V1NodeCondition {
  const current = node?.status?.conditions?.find((c) => c.type === wanted.type);
  const transitioned = current === undefined || current.status !== wanted.status;
  return {
    ...wanted,
    lastHeartbeatTime: now,
    lastTransitionTime: transitioned ? now : (current.lastTransitionTime ?? now),
  };
}
