/**
 * The node records the operator owns and derives (`status_<scr>` annotation and label,
 * `recordedOps_<scr>`) found with values it cannot have written, e.g. a hand edit. They are
 * rewritten from the node state, which is the truth, and a Warning Event names what was there, so
 * the correction is not silent. (`nodeState_<scr>` is not derived: a bad one is held, never rewritten.)
 */
import { nodeAnnotations, nodeLabels } from '../../../api/names.js';
import { SKYHOOK_STATUSES } from '../../../api/skyhook.js';
import type { NodeView, PlannerEvent } from './planner-types.js';

/** Kubernetes uids are opaque but are UUIDs in practice: letters, digits and dashes. */
const UID = /^[0-9A-Za-z-]+$/;
const isStatus = (value: string): boolean => (SKYHOOK_STATUSES as readonly string[]).includes(value);

/** What on the node cannot have been written by the operator: status values, and whether recordedOps_ is garbage. */
export function garbledNodeRecords(node: NodeView, skyhook: string): { status: string[]; recordedOps: boolean } {
  const status: string[] = [];
  const annotation = node.annotations[nodeAnnotations.status(skyhook)];
  if (annotation !== undefined && !isStatus(annotation))
    status.push(`annotation ${nodeAnnotations.status(skyhook)}=${JSON.stringify(annotation)}`);
  const label = node.labels[nodeLabels.status(skyhook)];
  if (label !== undefined && !isStatus(label))
    status.push(`label ${nodeLabels.status(skyhook)}=${JSON.stringify(label)}`);
  const listed = (node.annotations[nodeAnnotations.recordedOps(skyhook)] ?? '').split(',').filter((uid) => uid !== '');
  return { status, recordedOps: listed.some((uid) => !UID.test(uid)) };
}

/** The Event for what garbledNodeRecords found on a node. */
export function garbledRecordsEvent(node: string, skyhook: string, found: string[]): PlannerEvent {
  return {
    kind: 'event',
    involved: { kind: 'Node', name: node },
    type: 'Warning',
    reason: 'NodeRecordRewritten',
    message: `Skyhook [${skyhook}]: ${found.join(', ')} cannot have been written by the operator and was rewritten from ${nodeAnnotations.nodeState(skyhook)}; these records are the operator's (change the Skyhook or ${nodeAnnotations.nodeState(skyhook)} instead)`,
  };
}
