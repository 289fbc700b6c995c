/**
 * Who holds a node's cordon. Each SCR that cordons a node for its interrupts records a claim
 * (`cordon_<scr>`), as does runtimeRequiredCordonAfter (`runtimeRequiredCordon`); the node is
 * uncordoned only when the last claim goes. A cordon nobody claimed (a person's, a NodeOp's) is
 * foreign: we work under it and never lift it. Pure, so the reconciler applies the same rule on the
 * node it reads at write time that the planner applied to its cached view.
 */
import {
  NODE_ANNOTATION_PREFIXES,
  nodeAnnotations,
  NODEOP_NAMES,
  RUNTIME_REQUIRED_CORDON_ANNOTATION,
} from '../../../api/names.js';

export const cordonClaim = (skyhook: string): string => nodeAnnotations.cordon(skyhook);

/** The claim annotations on a node (ours and every other SCR's, and the runtime-required one). */
export function cordonClaims(annotations: Record<string, string>): string[] {
  return Object.keys(annotations)
    .filter((key) => key.startsWith(NODE_ANNOTATION_PREFIXES.cordon) || key === RUNTIME_REQUIRED_CORDON_ANNOTATION)
    .sort();
}

/** SCRs other than `skyhook` that hold the node's cordon (names, from their `cordon_<scr>` claims). */
export function otherSkyhookClaims(annotations: Record<string, string>, skyhook: string): string[] {
  return cordonClaims(annotations)
    .filter((key) => key.startsWith(NODE_ANNOTATION_PREFIXES.cordon) && key !== cordonClaim(skyhook))
    .map((key) => key.slice(NODE_ANNOTATION_PREFIXES.cordon.length));
}

/**
 * A cordon someone else made: the node is unschedulable and nobody recorded a claim (a NodeOp's
 * `cordoned-by` counts as someone else).
 */
export function isForeignCordon(node: { unschedulable?: boolean; annotations: Record<string, string> }): boolean {
  if (node.unschedulable !== true) return false;
  return cordonClaims(node.annotations).length === 0 || node.annotations[NODEOP_NAMES.cordonedBy] !== undefined;
}

export interface CordonPatch {
  /** Annotations to remove. */
  remove: string[];
  /** Set `spec.unschedulable` to false. */
  uncordon: boolean;
}

/**
 * What releasing `claim` does to the node as it is now: the claim goes, and the node is
 * uncordoned only if it is cordoned, no other claim remains and no NodeOp holds it.
 */
export function cordonAfterRelease(
  node: { unschedulable?: boolean; annotations: Record<string, string> },
  claim: string,
): CordonPatch {
  const remaining = cordonClaims(node.annotations).filter((key) => key !== claim);
  const present = Object.hasOwn(node.annotations, claim);
  const heldByNodeOp = node.annotations[NODEOP_NAMES.cordonedBy] !== undefined;
  return {
    remove: present ? [claim] : [],
    uncordon: present && node.unschedulable === true && remaining.length === 0 && !heldByNodeOp,
  };
}
