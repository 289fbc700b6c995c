/**
 * `maintenance release <node>`, decided (pure): what a person may safely take back from a node that
 * holds a maintenance slot or a maintenance cordon, and what is refused.
 *
 * Released without --force: a node whose Node object is gone, a node whose daemon stopped reporting
 * (its Lease older than the policy's lockTTL, or DEFAULT_STALE_AFTER_MS without one), and leftovers
 * (a grant for an older request, or a `maintenance_<policy>` cordon with no grant behind it).
 * Refused without --force: a slot whose daemon is alive and whose request is not done, since that
 * node is being drained, is running its maintenance script or is rebooting; the refusal says which
 * and how it ends by itself. --force releases it anyway. A release removes the Lease's request,
 * grant, done and progress (so the operator cannot grant the stale request again; a daemon whose host
 * still asks queues again, at the back) and the node's maintenance claims, uncordoning the node only
 * when no other claim (an SCR's, a NodeOp's) holds it: the cordon writer (jobs/cordon/write.ts)
 * decides that again on the node as it is then, so a cordon an SCR takes meanwhile is never lifted,
 * and the operator lifting the same orphaned claim first is no error.
 */
import { MAINTENANCE_LEASE } from '../../api/maintenance-protocol.js';
import { cordonAfterRelease, type NodeCordonView } from '../../jobs/cordon/claims.js';
import type { Change, ChangeSet } from './changes.js';
import type { MaintenanceRow } from './maintenance-view.js';

export interface ReleaseInput {
  row: MaintenanceRow;
  node?: { annotations: Record<string, string>; unschedulable: boolean };
  lease?: { namespace: string; name: string; resourceVersion?: string };
  force: boolean;
}

const LEASE_KEYS = [
  MAINTENANCE_LEASE.request,
  MAINTENANCE_LEASE.grant,
  MAINTENANCE_LEASE.done,
  MAINTENANCE_LEASE.progress,
];

/** Why the slot of a live daemon is not released without --force, and how it ends by itself. */
export function busyExplanation(row: MaintenanceRow): string {
  const who = `node ${row.node} holds a slot of MaintenancePolicy ${row.policy ?? '?'} and its daemon reported ${row.heartbeatAgeSeconds ?? '?'} s ago`;
  if (row.state === 'finishing')
    return `${who}: it reported its maintenance done; the operator uncordons it and frees the slot within seconds`;
  // The Lease's grant phase first: the policy status is written after it.
  const drained =
    row.grantPhase === 'drained' ||
    (row.grantPhase === undefined && !['Cordoning', 'Draining'].includes(row.phase ?? ''));
  if (!drained)
    return `${who}: the operator is cordoning and draining it (a drain held by a PodDisruptionBudget shows in \`maintenance status\`)`;
  if (row.protocol === 'reboot')
    return `${who}: it is rebooting or about to; the slot is freed when it is back with a new boot ID`;
  return `${who}: its maintenance script has the node (the host has the maintenance-required and maintenance-in-progress files); the slot is freed when the script removes the required file. If the script failed, fix the host and remove that file there`;
}

/** Node annotations and schedulability after removing every maintenance claim (pure). */
function nodeChange(input: ReleaseInput): Change | undefined {
  const { row, node } = input;
  if (!node || row.claims.length === 0) return undefined;
  let view: NodeCordonView = { unschedulable: node.unschedulable, annotations: { ...node.annotations } };
  let uncordon = false;
  for (const claim of row.claims) {
    const after = cordonAfterRelease(view, claim);
    uncordon ||= after.uncordon;
    const annotations = { ...view.annotations };
    delete annotations[claim];
    view = { unschedulable: view.unschedulable === true && !after.uncordon, annotations };
  }
  const metadata = { annotations: Object.fromEntries(row.claims.map((claim) => [claim, null])) };
  return {
    target: { kind: 'Node', name: row.node, releaseClaims: row.claims },
    patch: { metadata, ...(uncordon ? { spec: { unschedulable: false } } : {}) },
    description: `remove ${row.claims.join(', ')} from node ${row.node}${uncordon ? ' and uncordon it' : ' (another claim keeps it cordoned)'}`,
  };
}

function leaseChange(input: ReleaseInput): Change | undefined {
  const { lease, row } = input;
  if (!lease || !['holding', 'finishing', 'orphaned', 'queued', 'requested'].includes(row.state)) return undefined;
  return {
    target: { kind: 'Lease', namespace: lease.namespace, name: lease.name },
    patch: {
      metadata: {
        annotations: Object.fromEntries(LEASE_KEYS.map((key) => [key, null])),
        ...(lease.resourceVersion ? { resourceVersion: lease.resourceVersion } : {}),
      },
    },
    description: `clear the maintenance request and grant of node ${row.node} (Lease ${lease.namespace}/${lease.name})`,
  };
}

/** The changes of a release, or the refusal (pure). */
export function releaseChanges(input: ReleaseInput): ChangeSet | { refused: string } {
  const { row, force } = input;
  const action = `release the maintenance slot of node ${row.node}`;
  const holds = row.state === 'holding' || row.state === 'finishing' || row.state === 'orphaned';
  if (!holds && row.claims.length === 0)
    return {
      action,
      destructive: true,
      changes: [],
      notes: [
        `node ${row.node} holds no maintenance slot and no maintenance cordon (${row.state}${row.reason ? `: ${row.reason}` : ''})`,
      ],
    };
  const safe = !row.nodeExists || row.stale || row.state === 'orphaned';
  if (!safe && !force)
    return {
      refused: `${busyExplanation(row)}. Not released; --force releases it anyway: the node is uncordoned although its host may still be under maintenance, and a daemon whose host still asks queues again at the back`,
    };
  const changes = [leaseChange(input), nodeChange(input)].filter((c): c is Change => c !== undefined);
  const why = !row.nodeExists
    ? 'the node is gone'
    : row.stale
      ? `its daemon last reported ${row.heartbeatAgeSeconds ?? '?'} s ago`
      : row.state === 'orphaned'
        ? 'nothing holds the slot any more'
        : 'forced';
  return { action: `${action} (${why})`, destructive: true, changes };
}
