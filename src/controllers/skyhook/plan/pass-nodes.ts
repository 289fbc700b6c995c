/**
 * The first phases of a pass (plan-skyhook.ts): bring each targeted node's record up to date (op
 * outcomes, version changes, config cycles), then decide each node's status before admission. Each
 * phase returns new node records; none changes the ones it is given.
 */
import { nodeAnnotations } from '../../../api/names.js';
import { readNodeSkyhookRecord, type SkyhookStatusValue } from '../../../api/node-state.js';
import { planConfigCycles } from './config-cycle.js';
import { decideGates, type GateDecision } from './health-gate-plan.js';
import { releaseOrphanedSkips } from './interrupt-flow.js';
import {
  absorbOpOutcomes,
  deleteOps,
  liveOps,
  recordedOpUids,
  recordRunningStages,
  type NodeWork,
} from './node-work.js';
import type { DecidedNode, RefreshedNode } from './plan-cache.js';
import type { DeleteStageOp, NodeView, PlannerEvent, StageOpSummary, UpsertPackageConfigMap } from './planner-types.js';
import { blockedReason, type SkyhookPass } from './skyhook-pass.js';
import { planNodePackages, type NodePackagesPlan } from './stage-machine.js';
import { applyVersionChanges, startConfigCycle } from './state-transitions.js';

/** The nodes' records once op outcomes and version changes are in, and the config changes still to run. */
export interface RefreshedNodes {
  works: NodeWork[];
  configUpdates: Record<string, string[]>;
  /** A package version change was written into some node's state in this pass (batch state may reset). */
  versionChanged: boolean;
  events: PlannerEvent[];
}

/** Ops on nodes the SCR no longer targets go (finished ones are left to their retention). */
export function untargetedOpDeletes(pass: SkyhookPass): DeleteStageOp[] {
  return pass.ops
    .filter(
      (op) => !pass.targetedNames.has(op.node) && op.phase !== 'Completed' && op.phase !== 'Failed' && !op.deleting,
    )
    .map((op) => ({ kind: 'deleteStageOp' as const, name: op.name, reason: 'node no longer targeted' }));
}

export function refreshNodes(pass: SkyhookPass): RefreshedNodes {
  const events: PlannerEvent[] = [];
  const configUpdates: Record<string, string[]> = { ...(pass.scr.status?.configUpdates ?? {}) };
  let versionChanged = false;
  const works = pass.targeted.map((node): NodeWork => {
    const ops = pass.opIndex.onNode(pass.name, node.name);
    const refreshed = pass.cache
      ? pass.cache.refresh(node, ops, () => refreshNode(pass, node, ops))
      : refreshNode(pass, node, ops);
    events.push(...refreshed.events);
    for (const pkg of refreshed.changedPackages) delete configUpdates[pkg];
    // Only when a change is written into the state, not on every pass until the upgrade is done there.
    versionChanged ||= refreshed.versionChangeApplied === true;
    return refreshed.work;
  });
  return { works, configUpdates, versionChanged, events };
}

/** One node's record with its ops' outcomes and the spec's version changes in (cached: plan-cache.ts). */
function refreshNode(pass: SkyhookPass, node: NodeView, nodeOps: readonly StageOpSummary[]): RefreshedNode {
  const { name, spec } = pass;
  const events: PlannerEvent[] = [];
  const record = readNodeSkyhookRecord(node, name);
  const recordedUids = recordedOpUids(node, name);
  const ops = nodeOps.map((op) => (recordedUids.has(op.uid) ? { ...op, recorded: true } : op));
  const work: NodeWork = { node, record, state: record.state, ops, recorded: [], recordedUids };
  if (record.malformed) return { work, events, changedPackages: [] };
  // The state below is the operator's copy; this pass writes it back over the unreadable one.
  if (record.restored)
    events.push({
      kind: 'event',
      involved: { kind: 'Node', name: node.name },
      type: 'Warning',
      reason: 'NodeStateRestored',
      message: `${record.restored.message}; restored from ${nodeAnnotations.nodeStateCopy(name)}, the copy the operator keeps`,
    });
  const outcomes = absorbOpOutcomes(work);
  events.push(...outcomes.events);
  if (pass.frozen)
    return { work: { ...work, state: outcomes.state, recorded: outcomes.recorded }, events, changedPackages: [] };
  const change = applyVersionChanges(outcomes.state, spec.packages);
  return {
    work: { ...work, state: releaseOrphanedSkips(change.state, ops), recorded: outcomes.recorded },
    events,
    changedPackages: change.changedPackages,
    versionChangeApplied: change.applied,
  };
}

export interface ConfigCycles {
  works: NodeWork[];
  configUpdates: Record<string, string[]>;
  upserts: UpsertPackageConfigMap[];
  deletes: DeleteStageOp[];
}

/** Changed package ConfigMaps: write them, and send the packages on every readable node back to config. */
export function runConfigCycles(pass: SkyhookPass, nodes: RefreshedNodes): ConfigCycles {
  const { name, spec } = pass;
  if (pass.frozen) return { works: nodes.works, configUpdates: nodes.configUpdates, upserts: [], deletes: [] };
  const cycles = planConfigCycles({
    packages: spec.packages,
    configMaps: pass.skyhook.packageConfigMaps,
    configUpdates: nodes.configUpdates,
    nodes: nodes.works.filter((work) => blockedReason(pass, work) === undefined),
  });
  const upserts = cycles.upserts.map((upsert) => ({
    kind: 'upsertPackageConfigMap' as const,
    skyhook: name,
    ...upsert,
  }));
  let works = nodes.works;
  const deletes: DeleteStageOp[] = [];
  for (const pkg of cycles.cycles) {
    works = works.map((work) => {
      if (work.record.malformed) return work;
      const restarted = { ...work, state: startConfigCycle(work.state, pkg, spec.packages![pkg]!) };
      const stale = liveOps(restarted).filter(
        (o) => o.package === pkg && ['config', 'interrupt', 'post-interrupt'].includes(o.stage),
      );
      const deleted = deleteOps(restarted, stale, 'configuration changed');
      deletes.push(...deleted.deletes);
      return deleted.work;
    });
  }
  return { works, configUpdates: cycles.configUpdates, upserts, deletes };
}

export interface DecidedNodes {
  /** With the entries of running stages a lost write left out written back. */
  works: NodeWork[];
  /** The stage machine's plan of each node (same index as `works`). */
  plans: NodePackagesPlan[];
  /** Each node's status before admission: complete, disabled, paused, blocked or waiting (or a gate's). */
  nodeStatus: Record<string, SkyhookStatusValue>;
  /** The health-gate decision of each node whose packages are done (health-gate-plan.ts). */
  gates: Map<string, GateDecision>;
}

export function decideStatuses(pass: SkyhookPass, cycles: ConfigCycles): DecidedNodes {
  const nodeStatus: Record<string, SkyhookStatusValue> = {};
  const plans: NodePackagesPlan[] = [];
  const gates = new Map<string, GateDecision>();
  const configKey = pass.cache ? JSON.stringify(cycles.configUpdates) : '';
  const works = cycles.works.map((from) => {
    // No named closure per node: the operator's bundle keeps function names (esbuild keepNames), and
    // naming one closure per node per pass was 2 % of the operator's CPU with 5 SCRs over 1000 nodes.
    const decided = pass.cache
      ? pass.cache.decide(from, configKey, () => decideNode(pass, from, cycles.configUpdates, configKey))
      : decideNode(pass, from, cycles.configUpdates, configKey);
    plans.push(decided.plan);
    nodeStatus[from.node.name] = decided.status;
    // Health gates wait with timeouts (`now`): decided afresh on every pass, never cached.
    if (decided.status === 'complete') {
      const gate = gateDecision(pass, from);
      gates.set(from.node.name, gate);
      nodeStatus[from.node.name] = gate.status;
    }
    return decided.work;
  });
  return { works, plans, nodeStatus, gates };
}

/** One node's stage plan and status before admission and health gates. */
function decideNode(
  pass: SkyhookPass,
  work: NodeWork,
  configUpdates: Record<string, string[]>,
  configKey: string,
): DecidedNode {
  const { settings } = pass;
  const plan = planNodePackages({
    packages: pass.spec.packages,
    state: work.state,
    configUpdates,
    ops: work.ops,
    now: pass.now,
    retry: { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs },
  });
  const status = statusBeforeAdmission(pass, work, plan);
  const decided = work.record.malformed ? work : { ...work, state: recordRunningStages(work.state, plan) };
  return { from: work, configKey, plan, status, work: decided };
}

/** A node done with its packages passes the policy's health gates before it counts as complete. */
function gateDecision(pass: SkyhookPass, work: NodeWork): GateDecision {
  const policy = pass.spec.deploymentPolicy;
  return decideGates({
    skyhook: pass.name,
    gates: pass.policy?.spec.healthGates,
    results: policy === undefined ? undefined : pass.healthGates?.results[policy]?.[work.node.name],
    node: work.node,
    recordStatus: work.record.status,
    holdsClaim: Object.hasOwn(work.node.annotations, pass.claim),
    now: pass.now,
  });
}

function statusBeforeAdmission(pass: SkyhookPass, work: NodeWork, plan: NodePackagesPlan): SkyhookStatusValue {
  if (plan.complete && !work.record.malformed) return 'complete';
  if (pass.disabled) return 'disabled';
  if (pass.paused) return 'paused';
  const blocked = blockedReason(pass, work) !== undefined;
  const refused = pass.trustRefusals.length > 0;
  return blocked || pass.problems.length > 0 || pass.missingPolicy !== undefined || refused ? 'blocked' : 'waiting';
}
