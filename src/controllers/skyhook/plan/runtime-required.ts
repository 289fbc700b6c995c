/**
 * runtimeRequired: nodes carrying the runtime-required taint get the SCRs' packages and lose the
 * taint once every runtimeRequired SCR targeting them is complete there (per node, not per SCR).
 * autoTaintNewNodes taints nodes nothing of ours has touched yet (no annotation with our prefix), so
 * workloads wait for the packages. runtimeRequiredCordonAfter cordons the node as the taint goes,
 * under a claim of its own that survives later interrupts and is released only by a person.
 */
import {
  nodeAnnotations,
  PREFIX,
  RUNTIME_REQUIRED_CORDON_ANNOTATION,
  SKYHOOK_ANNOTATIONS,
} from '../../../api/names.js';
import type { Skyhook } from '../../../api/skyhook.js';
import { selectorMatches } from '../../../api/label-selector.js';
import type { SkyhookStatusValue } from '../../../api/node-state.js';
import type { AddNodeTaint, CordonNode, NodeView, PlannerAction, TaintView } from './planner-types.js';
import { nameOf } from '../../../api/object-meta.js';

export const hasTaint = (node: NodeView, taint: TaintView): boolean =>
  node.taints.some((t) => t.key === taint.key && t.effect === taint.effect && (t.value ?? '') === (taint.value ?? ''));

const OUR_PREFIX = `${PREFIX}/`;

/** A node nothing of ours has written to: no annotation under our prefix. */
export function isUntouched(node: NodeView): boolean {
  for (const key in node.annotations) if (key.startsWith(OUR_PREFIX)) return false;
  return true;
}

const targets = (skyhook: Skyhook, node: NodeView): boolean => selectorMatches(skyhook.spec.nodeSelectors, node.labels);

/** The taint (and its `autoTaint_<key>` mark) for untouched nodes targeted by an autoTaintNewNodes SCR. */
export function planAutoTaints(skyhooks: Skyhook[], nodes: NodeView[], taint: TaintView): AddNodeTaint[] {
  const tainting = skyhooks.filter((scr) => scr.spec.runtimeRequired === true && scr.spec.autoTaintNewNodes === true);
  // Planned on every pass over every node: nothing to look at when no SCR taints.
  if (tainting.length === 0) return [];
  return nodes
    .filter((node) => !hasTaint(node, taint) && isUntouched(node) && tainting.some((scr) => targets(scr, node)))
    .map((node) => ({
      kind: 'addNodeTaint',
      node: node.name,
      taint: { ...taint },
      annotations: { [nodeAnnotations.autoTaint(taint.key)]: 'true' },
    }));
}

export interface RuntimeRequiredInput {
  skyhooks: Skyhook[];
  nodes: NodeView[];
  taint: TaintView;
  /** The node's status for an SCR: from this pass where it was planned, else as last written. */
  statusOf: (skyhook: string, node: string) => SkyhookStatusValue | undefined;
  /** Only nodes this SCR targets (a reconcile of one SCR); undefined = all. */
  only?: string;
}

/** Taint removals (and runtimeRequiredCordonAfter cordons) for nodes whose runtimeRequired SCRs are all complete. */
export function planRuntimeRequiredRelease(input: RuntimeRequiredInput): PlannerAction[] {
  const actions: PlannerAction[] = [];
  const required = input.skyhooks.filter((scr) => scr.spec.runtimeRequired === true);
  const onlyScr = input.only === undefined ? undefined : input.skyhooks.find((scr) => scr.metadata.name === input.only);
  // Without a runtimeRequired SCR no node is held by one (the pass over every node would only make garbage).
  for (const node of required.length === 0 ? [] : input.nodes) {
    if (onlyScr !== undefined && !targets(onlyScr, node)) continue;
    const holding = required.filter((scr) => targets(scr, node));
    if (!hasTaint(node, input.taint) || holding.length === 0) continue;
    const disabled = (scr: Skyhook): boolean => scr.metadata.annotations?.[SKYHOOK_ANNOTATIONS.disable] === 'true';
    if (!holding.every((scr) => !disabled(scr) && input.statusOf(nameOf(scr), node.name) === 'complete')) continue;
    actions.push({ kind: 'removeNodeTaint', node: node.name, taint: { ...input.taint } });
    if (
      holding.some((scr) => scr.spec.runtimeRequiredCordonAfter === true) &&
      !Object.hasOwn(node.annotations, RUNTIME_REQUIRED_CORDON_ANNOTATION)
    ) {
      const cordon: CordonNode = {
        kind: 'cordonNode',
        node: node.name,
        claim: RUNTIME_REQUIRED_CORDON_ANNOTATION,
        reason: 'runtimeRequiredCordonAfter: packages done, node held for validation',
      };
      actions.push(cordon);
    }
  }
  // A person lifted the runtime-required cordon but left its claim: the claim goes too.
  for (const node of input.nodes) {
    if (node.unschedulable === false && Object.hasOwn(node.annotations, RUNTIME_REQUIRED_CORDON_ANNOTATION)) {
      actions.push({
        kind: 'setNodeAnnotations',
        node: node.name,
        annotations: { [RUNTIME_REQUIRED_CORDON_ANNOTATION]: null },
      });
    }
  }
  return actions;
}
