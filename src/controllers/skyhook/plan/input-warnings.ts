/**
 * Input the operator accepts but that is almost certainly not what its author meant: annotation and
 * label values it reads as "not set", a selector that matches no node, budgets that do not limit
 * anything or that upstream's rules quietly round up, and packages two SCRs install on the same
 * node. Nothing here stops the rollout (upstream runs such SCRs the same way); the `InputWarning`
 * condition says what was read, how, and what to change, so the surprise is not silent.
 */
import type { DeploymentPolicy } from '../../../api/deployment-policy.js';
import {
  IGNORE_NODE_LABEL,
  NODE_ANNOTATION_PREFIXES,
  SKYHOOK_ANNOTATIONS,
  SKYHOOK_CONDITIONS,
} from '../../../api/names.js';
import type { Skyhook } from '../../../api/skyhook.js';
import type { Compartment } from './compartments.js';
import { selectorMatches } from '../../../api/label-selector.js';
import type { NodeView } from './planner-types.js';
import type { ConditionValue } from './skyhook-status.js';
import { nameOf } from '../../../api/object-meta.js';
import { memo, type SkyhookCacheRun } from './plan-cache.js';

export interface InputWarning {
  /** CamelCase, the condition's reason when it is the only kind of warning. */
  reason: string;
  message: string;
}

export interface InputWarningsInput {
  skyhook: Skyhook;
  /** Every SCR of the cluster (the one planned included). */
  skyhooks: Skyhook[];
  /** The SCR's targeted nodes. */
  targeted: NodeView[];
  compartments: Compartment[];
  policy?: DeploymentPolicy;
  /** The SCR's per-node cache (plan-cache.ts): a node's own facts are read again only when it changed. */
  cache?: SkyhookCacheRun;
}

/** What a node itself says that the warnings read: its ignore label's value, the SCRs its cordon claims name. */
interface NodeFacts {
  ignoreValue?: string;
  claimKeys: string[];
}

function nodeFacts(node: NodeView): NodeFacts {
  const claimKeys = Object.keys(node.annotations).filter((key) => key.startsWith(NODE_ANNOTATION_PREFIXES.cordon));
  const ignoreValue = node.labels[IGNORE_NODE_LABEL];
  return ignoreValue === undefined ? { claimKeys } : { ignoreValue, claimKeys };
}

const NODES_SHOWN = 5;

function nodeNames(nodes: string[]): string {
  const sorted = [...nodes].sort();
  return `${sorted.slice(0, NODES_SHOWN).join(', ')}${sorted.length > NODES_SHOWN ? ` and ${sorted.length - NODES_SHOWN} more` : ''}`;
}

export function inputWarnings(input: InputWarningsInput): InputWarning[] {
  return [
    ...annotationWarnings(input.skyhook),
    ...nodeWarnings(input),
    ...budgetWarnings(input),
    ...packageConflicts(input),
  ];
}

/** pause/disable: only "true" counts (upstream's rule); "false" and absence are the same. */
function annotationWarnings(skyhook: Skyhook): InputWarning[] {
  const annotations = skyhook.metadata.annotations ?? {};
  return [SKYHOOK_ANNOTATIONS.pause, SKYHOOK_ANNOTATIONS.disable]
    .filter((key) => annotations[key] !== undefined && annotations[key] !== 'true' && annotations[key] !== 'false')
    .map((key) => ({
      reason: 'InvalidAnnotation',
      message: `annotation ${key}=${JSON.stringify(annotations[key])} is read as "false" (only "true" counts); set it to "true" or remove it`,
    }));
}

function nodeWarnings({ skyhooks, targeted, cache }: InputWarningsInput): InputWarning[] {
  const warnings: InputWarning[] = [];
  if (targeted.length === 0) {
    warnings.push({
      reason: 'NoMatchingNodes',
      message:
        'spec.nodeSelectors matches no node, so nothing will be installed; check it against `kubectl get nodes --show-labels`',
    });
  }
  const facts = targeted.map((node) => memo(cache, node.name, 'nodeFacts', [node], () => nodeFacts(node)));
  const byValue = new Map<string, string[]>();
  for (const [i, node] of targeted.entries()) {
    const value = facts[i]!.ignoreValue;
    if (value !== undefined && value !== 'true' && value !== 'false')
      byValue.set(value, [...(byValue.get(value) ?? []), node.name]);
  }
  for (const [value, nodes] of byValue) {
    warnings.push({
      reason: 'InvalidNodeLabel',
      message: `label ${IGNORE_NODE_LABEL}=${JSON.stringify(value)} on node(s) ${nodeNames(nodes)} is read as "false" (only "true" skips a node), so the node(s) are worked on; set it to "true" or "false"`,
    });
  }
  // A cordon claim of an SCR that does not exist keeps the node from ever being uncordoned by the SCRs that do.
  const known = new Set(skyhooks.map((scr) => nameOf(scr)));
  const stale = new Map<string, string[]>();
  for (const [i, node] of targeted.entries()) {
    for (const key of facts[i]!.claimKeys) {
      const owner = key.slice(NODE_ANNOTATION_PREFIXES.cordon.length);
      if (!known.has(owner)) stale.set(key, [...(stale.get(key) ?? []), node.name]);
    }
  }
  for (const [key, nodes] of stale) {
    warnings.push({
      reason: 'StaleCordonClaim',
      message: `annotation ${key} on node(s) ${nodeNames(nodes)} claims the cordon for a Skyhook that does not exist, so no Skyhook will uncordon the node(s); remove the annotation (and uncordon the node if nobody else holds it)`,
    });
  }
  return warnings;
}

function budgetWarnings({ skyhook, compartments, policy }: InputWarningsInput): InputWarning[] {
  const warnings: InputWarning[] = [];
  const budget = skyhook.spec.interruptionBudget;
  const legacy = compartments.find((compartment) => compartment.legacy);
  if (legacy && budget) {
    const nodes = legacy.nodes.length;
    if (budget.count === 0 || budget.percent === 0) {
      const field = budget.count === 0 ? 'count' : 'percent';
      warnings.push({
        reason: 'BudgetRoundedUp',
        message: `spec.interruptionBudget.${field} is 0, which upstream's rule reads as 1 node at a time; set count: 1 to say so (pause the Skyhook to stop it)`,
      });
    } else if (budget.count !== undefined && budget.count !== null && nodes > 0 && budget.count > nodes) {
      warnings.push({
        reason: 'BudgetAboveNodes',
        message: `spec.interruptionBudget.count ${budget.count} is above the ${nodes} targeted node(s), so every node may be interrupted at once; lower it if that is not intended`,
      });
    }
  }
  for (const compartment of compartments) {
    if (compartment.legacy || compartment.nodes.length === 0 || compartment.ceiling <= compartment.nodes.length)
      continue;
    warnings.push({
      reason: 'BudgetAboveNodes',
      message: `DeploymentPolicy ${policy?.metadata.name ?? ''} compartment ${compartment.name}: budget count ${compartment.ceiling} is above its ${compartment.nodes.length} node(s) of this Skyhook, so all of them may be interrupted at once; lower it if that is not intended`,
    });
  }
  return warnings;
}

/**
 * The same package name installed on a node by two SCRs: both run (one after the other, by
 * priority then name), and what the host keeps is whichever ran last, so the result depends on
 * the order rather than on either spec. Reported on both SCRs, naming the other.
 */
function packageConflicts({ skyhook, skyhooks, targeted }: InputWarningsInput): InputWarning[] {
  const name = nameOf(skyhook);
  const warnings: InputWarning[] = [];
  for (const other of skyhooks) {
    const otherName = nameOf(other);
    if (
      otherName === name ||
      other.metadata.deletionTimestamp ||
      other.metadata.annotations?.[SKYHOOK_ANNOTATIONS.disable] === 'true'
    )
      continue;
    const shared = Object.keys(skyhook.spec.packages ?? {}).filter((pkg) => other.spec.packages?.[pkg] !== undefined);
    if (shared.length === 0) continue;
    const nodes = targeted
      .filter((node) => selectorMatches(other.spec.nodeSelectors, node.labels))
      .map((node) => node.name);
    if (nodes.length === 0) continue;
    for (const pkg of shared.sort()) {
      const mine = skyhook.spec.packages![pkg]!.version;
      const theirs = other.spec.packages![pkg]!.version;
      const what =
        mine === theirs
          ? `also installs package ${pkg}:${theirs}, so it runs twice`
          : `installs package ${pkg} at version ${theirs} (this one: ${mine}), so the host ends with whichever runs last`;
      warnings.push({
        reason: 'PackageConflict',
        message: `Skyhook ${otherName} ${what} on node(s) ${nodeNames(nodes)}; install each package from one Skyhook, or give them disjoint nodeSelectors`,
      });
    }
  }
  return warnings;
}

/** The `InputWarning` condition, or undefined when there is nothing to warn about. */
export function inputWarningCondition(warnings: InputWarning[]): ConditionValue | undefined {
  if (warnings.length === 0) return undefined;
  const reasons = [...new Set(warnings.map((warning) => warning.reason))];
  return {
    type: SKYHOOK_CONDITIONS.inputWarning,
    status: 'True',
    reason: reasons.length === 1 ? reasons[0]! : 'MultipleWarnings',
    message: warnings.map((warning) => warning.message).join('; '),
  };
}
