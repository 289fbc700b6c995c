/**
 * Who holds a node's cordon, as claims recorded in node annotations (pure: the Skyhook planner, which
 * may do no I/O, decides with these rules, and the writers apply the same rules to the node they read
 * at write time). Two kinds of claim, with the annotations upstream's tools and our e2e tests read:
 *
 *   shared     `<key>: "true"`: each SCR cordoning for its interrupts (`cordon_<scr>`),
 *              runtimeRequiredCordonAfter (`runtimeRequiredCordon`), each MaintenancePolicy's slot
 *              holder (`maintenance_<policy>`).
 *              A shared claim joins a cordon other shared claims hold; the node is uncordoned only
 *              when the last one goes.
 *   exclusive  `cordoned-by: <namespace>/<name>@<uid>`: a NodeOp. It cordons only a schedulable node
 *              and never joins a cordon it did not make; it lifts its own cordon when it is done.
 *
 * A cordon nobody claimed (a person's) or a NodeOp holds is foreign to shared claimers: they work
 * under it and never lift it. A NodeOp finds any existing cordon someone else's and works under it.
 */
import {
  NODE_ANNOTATION_PREFIXES,
  nodeAnnotations,
  NODEOP_NAMES,
  RUNTIME_REQUIRED_CORDON_ANNOTATION,
} from '../../api/names.js';

export type CordonClaim = { kind: 'shared'; key: string } | { kind: 'exclusive'; owner: string };

export const sharedClaim = (key: string): CordonClaim => ({ kind: 'shared', key });
export const nodeOpClaim = (owner: string): CordonClaim => ({ kind: 'exclusive', owner });

/** The shared claim key of an SCR: `cordon_<scr>`. */
export const cordonClaim = (skyhook: string): string => nodeAnnotations.cordon(skyhook);

/** The shared claim key of a MaintenancePolicy's slot holder: `maintenance_<policy>`. */
export const maintenanceClaim = (policy: string): string => `${NODE_ANNOTATION_PREFIXES.maintenance}${policy}`;

/** The owner value of a NodeOp's exclusive claim: `<namespace>/<name>@<uid>`. */
export function cordonOwner(ref: { namespace?: string; name?: string; uid?: string }): string {
  return `${ref.namespace ?? ''}/${ref.name ?? ''}@${ref.uid ?? ''}`;
}

/** The parts of a Node the rules read (a V1Node fits; the type stays free of the client package). */
export interface NodeLike {
  metadata?: { annotations?: Record<string, string> };
  spec?: { unschedulable?: boolean };
}

/** A node as the rules see it (the planner's node view has this shape). */
export interface NodeCordonView {
  unschedulable?: boolean;
  annotations: Record<string, string>;
}

export const cordonViewOf = (node: NodeLike): NodeCordonView => ({
  unschedulable: node.spec?.unschedulable === true,
  annotations: node.metadata?.annotations ?? {},
});

/** The NodeOp holding the node's cordon (its exclusive claim), if any. */
export function cordonedBy(node: NodeLike): string | undefined {
  return node.metadata?.annotations?.[NODEOP_NAMES.cordonedBy];
}

/** True when the NodeOp `owner` cordoned the node and it is still cordoned. */
export function isCordonedBy(node: NodeLike, owner: string): boolean {
  return node.spec?.unschedulable === true && cordonedBy(node) === owner;
}

/** The shared claims on a node (every SCR's, every maintenance holder's and the runtime-required one), sorted. */
export function cordonClaims(annotations: Record<string, string>): string[] {
  return Object.keys(annotations)
    .filter(
      (key) =>
        key.startsWith(NODE_ANNOTATION_PREFIXES.cordon) ||
        key.startsWith(NODE_ANNOTATION_PREFIXES.maintenance) ||
        key === RUNTIME_REQUIRED_CORDON_ANNOTATION,
    )
    .sort();
}

/**
 * A node one of our actors has taken out of service: cordoned, and the cordon is held by an SCR's
 * interrupt claim, a maintenance slot holder or a NodeOp; or rebooted by a NodeOp that does not
 * cordon (`rebooting-by`, cordoned or not). This is what every disruption budget counts. A person's
 * cordon and the runtime-required cordon of a new node (never in service) are not disruptions we
 * made, so they do not use up a budget.
 */
export function isDisrupted(node: NodeCordonView): boolean {
  if (node.annotations[NODEOP_NAMES.rebootingBy] !== undefined) return true;
  if (node.unschedulable !== true) return false;
  if (node.annotations[NODEOP_NAMES.cordonedBy] !== undefined) return true;
  return Object.keys(node.annotations).some(
    (key) => key.startsWith(NODE_ANNOTATION_PREFIXES.cordon) || key.startsWith(NODE_ANNOTATION_PREFIXES.maintenance),
  );
}

/** A cordon a shared claimer did not make: the node is unschedulable and no shared claim or a NodeOp holds it. */
export function isForeignCordon(node: NodeCordonView): boolean {
  if (node.unschedulable !== true) return false;
  return cordonClaims(node.annotations).length === 0 || node.annotations[NODEOP_NAMES.cordonedBy] !== undefined;
}

/**
 * What releasing the shared `claim` does to the node as it is now: the claim goes, and the node is
 * uncordoned only if it is cordoned, no other claim remains and no NodeOp holds it.
 */
export function cordonAfterRelease(node: NodeCordonView, claim: string): { remove: string[]; uncordon: boolean } {
  const remaining = cordonClaims(node.annotations).filter((key) => key !== claim);
  const present = Object.hasOwn(node.annotations, claim);
  const heldByNodeOp = node.annotations[NODEOP_NAMES.cordonedBy] !== undefined;
  return {
    remove: present ? [claim] : [],
    uncordon: present && node.unschedulable === true && remaining.length === 0 && !heldByNodeOp,
  };
}

/** Annotations to set (null: remove) and, when it changes, the node's schedulability. */
export interface CordonPatch {
  annotations: Record<string, string | null>;
  unschedulable?: boolean;
}

/** `joined`: a shared claim added to a cordon other shared claims hold. */
export type CordonOutcome = 'cordoned' | 'joined' | 'ours-already' | 'cordoned-by-someone-else';

/** What cordoning under `claim` does to the node as it is now (no patch: nothing to write). */
export function decideCordon(
  node: NodeCordonView,
  claim: CordonClaim,
): { outcome: CordonOutcome; patch?: CordonPatch } {
  if (claim.kind === 'exclusive') {
    if (node.unschedulable && node.annotations[NODEOP_NAMES.cordonedBy] === claim.owner)
      return { outcome: 'ours-already' };
    if (node.unschedulable) return { outcome: 'cordoned-by-someone-else' };
    return {
      outcome: 'cordoned',
      patch: { annotations: { [NODEOP_NAMES.cordonedBy]: claim.owner }, unschedulable: true },
    };
  }
  if (node.unschedulable && Object.hasOwn(node.annotations, claim.key)) return { outcome: 'ours-already' };
  if (isForeignCordon(node)) return { outcome: 'cordoned-by-someone-else' };
  const patch = { annotations: { [claim.key]: 'true' }, unschedulable: true };
  return { outcome: node.unschedulable ? 'joined' : 'cordoned', patch };
}

/**
 * What releasing `claim` does to the node as it is now. A shared claim follows cordonAfterRelease.
 * A NodeOp's claim goes when it is still the holder, and the node is uncordoned if it is cordoned;
 * a leftover claim on a node someone already uncordoned is only removed.
 */
export function decideRelease(node: NodeCordonView, claim: CordonClaim): { uncordons: boolean; patch?: CordonPatch } {
  const { remove, uncordon } =
    claim.kind === 'shared'
      ? cordonAfterRelease(node, claim.key)
      : node.annotations[NODEOP_NAMES.cordonedBy] === claim.owner
        ? { remove: [NODEOP_NAMES.cordonedBy], uncordon: node.unschedulable === true }
        : { remove: [], uncordon: false };
  if (remove.length === 0 && !uncordon) return { uncordons: false };
  const annotations = Object.fromEntries(remove.map((key) => [key, null]));
  return { uncordons: uncordon, patch: uncordon ? { annotations, unschedulable: false } : { annotations } };
}
