/**
 * Planning one SCR: bring every targeted node's state up to date (op outcomes, version changes,
 * config cycles), decide each node's status, admit nodes within the budget, start their next stages,
 * and derive the SCR status. Actions come out grouped in a crash-safe order: failure reports,
 * ConfigMaps, node state (with the uids of the ops it records) and status, cordon releases, the
 * state and status of nodes newly taking a budget slot, deletions, suspensions, creations, SCR
 * status, events.
 */
import type { DeploymentPolicy } from '../../../api/deployment-policy.js';
import type { Skyhook } from '../../../api/skyhook.js';
import { IGNORE_NODE_LABEL, nodeAnnotations, SKYHOOK_ANNOTATIONS } from '../../../api/names.js';
import { skyhookSpecProblems } from '../../../api/spec-checks.js';
import { planConfigCycles } from './config-cycle.js';
import { cordonClaim } from '../../../jobs/cordon/claims.js';
import { planInterruptFlow, releaseOrphanedSkips } from './interrupt-flow.js';
import { inputWarningCondition, inputWarnings } from './input-warnings.js';
import { garbledNodeRecords, garbledRecordsEvent } from './node-record-checks.js';
import { isIgnored, untoleratedTaints } from './node-eligibility.js';
import { selectorMatches } from '../../../api/label-selector.js';
import {
  nodeSkyhookConditions,
  readNodeSkyhookRecord,
  serializeNodeState,
  type SkyhookStatusValue,
} from '../../../api/node-state.js';
import { holdAnnotations, holdConditions, malformedHold, type NodeHold, type NodeHoldReport } from './node-holds.js';
import {
  absorbOpOutcomes,
  advanceNode,
  deleteOp,
  expiredOps,
  liveOps,
  recordedOpsUpdate,
  recordedOpUids,
  recordRunningStages,
  type NodeWork,
} from './node-work.js';
import type { PriorityGates } from './priority-gates.js';
import type {
  CreateStageOp,
  DrainBlocker,
  NodeView,
  PlannerAction,
  PlannerEvent,
  PlannerSettings,
  SkyhookInput,
  StageOpSummary,
} from './planner-types.js';
import type { RolloutNode } from './rollout-admission.js';
import { compartmentStatuses, planRollout, resetsBatchState } from './rollout-plan.js';
import { missingPolicyMessage, skyhookStatusUpdate } from './skyhook-status-update.js';
import { isLive, planNodePackages, type NodePackagesPlan } from './stage-machine.js';
import { applyVersionChanges, startConfigCycle } from './state-transitions.js';

export interface SkyhookPlanInput {
  skyhook: SkyhookInput;
  nodes: NodeView[];
  stageOps: StageOpSummary[];
  now: number;
  settings: PlannerSettings;
  gates: PriorityGates;
  /** The cluster's DeploymentPolicies (an SCR naming one not here is blocked). */
  policies?: DeploymentPolicy[];
  /** Every SCR of the cluster, for the conflicts between them (input-warnings.ts). */
  skyhooks?: Skyhook[];
}

export interface SkyhookPlan {
  actions: PlannerAction[];
  nodeStatus: Record<string, SkyhookStatusValue>;
  requeueAfterMs?: number;
}

export function planSkyhook({
  skyhook: input,
  nodes,
  stageOps,
  now,
  settings,
  gates,
  policies,
  skyhooks,
}: SkyhookPlanInput): SkyhookPlan {
  const scr = input.skyhook;
  const name = scr.metadata.name ?? '';
  const spec = scr.spec;
  const paused = scr.metadata.annotations?.[SKYHOOK_ANNOTATIONS.pause] === 'true';
  const disabled = scr.metadata.annotations?.[SKYHOOK_ANNOTATIONS.disable] === 'true';
  const problems = skyhookSpecProblems(spec);
  const frozen = paused || disabled || problems.length > 0;
  const ops = stageOps.filter((op) => op.skyhook === name);
  const targeted = nodes
    .filter((node) => selectorMatches(spec.nodeSelectors, node.labels))
    .sort((a, b) => a.createdAt - b.createdAt || (a.name < b.name ? -1 : 1));
  const targetedNames = new Set(targeted.map((node) => node.name));
  const events: PlannerEvent[] = [];
  const deletes = ops
    .filter((op) => !targetedNames.has(op.node) && op.phase !== 'Completed' && op.phase !== 'Failed' && !op.deleting)
    .map((op) => ({ kind: 'deleteStageOp' as const, name: op.name, reason: 'node no longer targeted' }));

  const policy = spec.deploymentPolicy
    ? policies?.find((candidate) => candidate.metadata.name === spec.deploymentPolicy)
    : undefined;
  const missingPolicy = spec.deploymentPolicy && policy === undefined ? spec.deploymentPolicy : undefined;
  let versionChanged = false;
  let configUpdates: Record<string, string[]> = { ...(scr.status?.configUpdates ?? {}) };
  const works: NodeWork[] = targeted.map((node) => {
    const record = readNodeSkyhookRecord(node, name);
    const recordedUids = recordedOpUids(node, name);
    const nodeOps = ops
      .filter((op) => op.node === node.name)
      .map((op) => (recordedUids.has(op.uid) ? { ...op, recorded: true } : op));
    const work: NodeWork = { node, record, state: record.state, ops: nodeOps, recorded: [], recordedUids };
    if (record.malformed) return work;
    // The state below is the operator's copy; this pass writes it back over the unreadable one.
    if (record.restored)
      events.push({
        kind: 'event',
        involved: { kind: 'Node', name: node.name },
        type: 'Warning',
        reason: 'NodeStateRestored',
        message: `${record.restored.message}; restored from ${nodeAnnotations.nodeStateCopy(name)}, the copy the operator keeps`,
      });
    events.push(...absorbOpOutcomes(work));
    if (!frozen) {
      const change = applyVersionChanges(work.state, spec.packages);
      work.state = change.state;
      for (const pkg of change.changedPackages) delete configUpdates[pkg];
      versionChanged ||= change.changedPackages.length > 0;
      work.state = releaseOrphanedSkips(work.state, work.ops);
    }
    return work;
  });
  const blockedReason = (work: NodeWork): 'malformed' | 'ignored' | 'taint' | undefined =>
    work.record.malformed
      ? 'malformed'
      : isIgnored(work.node)
        ? 'ignored'
        : untoleratedTaints(work.node, spec, settings.runtimeRequiredTaint).length > 0
          ? 'taint'
          : undefined;

  const upserts: PlannerAction[] = [];
  if (!frozen) {
    const eligible = works.filter((work) => blockedReason(work) === undefined);
    const cycles = planConfigCycles({
      packages: spec.packages,
      configMaps: input.packageConfigMaps,
      configUpdates,
      nodes: eligible,
    });
    configUpdates = cycles.configUpdates;
    for (const upsert of cycles.upserts) upserts.push({ kind: 'upsertPackageConfigMap', skyhook: name, ...upsert });
    for (const pkg of cycles.cycles) {
      for (const work of works.filter((w) => !w.record.malformed)) {
        work.state = startConfigCycle(work.state, pkg, spec.packages![pkg]!);
        for (const op of liveOps(work).filter(
          (o) => o.package === pkg && ['config', 'interrupt', 'post-interrupt'].includes(o.stage),
        )) {
          deletes.push(deleteOp(work, op, 'configuration changed'));
        }
      }
    }
  }

  const plans = new Map<NodeWork, NodePackagesPlan>();
  const nodeStatus: Record<string, SkyhookStatusValue> = {};
  for (const work of works) {
    const plan = planNodePackages({
      packages: spec.packages,
      state: work.state,
      configUpdates,
      ops: work.ops,
      now,
      retry: { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs },
    });
    plans.set(work, plan);
    if (!work.record.malformed) recordRunningStages(work, plan);
    const blocked = blockedReason(work);
    nodeStatus[work.node.name] =
      plan.complete && !work.record.malformed
        ? 'complete'
        : disabled
          ? 'disabled'
          : paused
            ? 'paused'
            : blocked !== undefined || problems.length > 0 || missingPolicy !== undefined
              ? 'blocked'
              : 'waiting';
  }

  // Admission: nodes still `waiting` here are ready unless an earlier SCR holds them.
  const ready = (work: NodeWork): boolean =>
    nodeStatus[work.node.name] === 'waiting' && gates.blockersOn(work.node.name).length === 0;
  const priority = { ...(scr.status?.nodePriority ?? {}) };
  const claim = cordonClaim(name);
  const rolloutNodes = new Map<string, RolloutNode>(
    works.map((work) => {
      const complete = nodeStatus[work.node.name] === 'complete';
      return [
        work.node.name,
        {
          node: work.node.name,
          busy: work.ops.some(isLive),
          holdsCordon: !complete && Object.hasOwn(work.node.annotations, claim),
          ready: !frozen && ready(work),
          sticky:
            priority[work.node.name] !== undefined ||
            work.record.status === 'in_progress' ||
            work.record.status === 'erroring',
          complete,
          failed: Object.values(work.state).some((entry) => entry.state === 'erroring'),
        },
      ];
    }),
  );
  const rollout = planRollout({
    spec,
    ...(policy ? { policy: policy.spec } : {}),
    targeted,
    nodes: rolloutNodes,
    previous: scr.status?.compartmentStatuses,
    complete: works.every((work) => nodeStatus[work.node.name] === 'complete'),
  });
  const admitted = rollout.admitted;
  const holds = new Map<string, NodeHold>();
  const drainBlockers = new Map<string, DrainBlocker[]>();
  const nodeMetadata: PlannerAction[] = [];

  const creates: CreateStageOp[] = [];
  let requeueAfterMs: number | undefined;
  for (const work of works) {
    const plan = plans.get(work)!;
    if (!frozen) for (const op of plan.strayOps) deletes.push(deleteOp(work, op, 'no package needs this stage now'));
    if (!admitted.has(work.node.name)) {
      const hold = holdOutside(work, nodeStatus[work.node.name]!);
      if (hold) holds.set(work.node.name, hold);
      // A strategy counts erroring nodes as failed; they show erroring until a batch picks them again.
      const strategic = rollout.compartments.some((c) => c.strategy !== undefined && c.nodes.includes(work.node.name));
      if (strategic && nodeStatus[work.node.name] === 'waiting' && rolloutNodes.get(work.node.name)!.failed)
        nodeStatus[work.node.name] = 'erroring';
      continue;
    }
    const flow = planInterruptFlow({
      skyhook: name,
      spec,
      node: work.node,
      state: work.state,
      plan,
      configUpdates,
      ops: work.ops,
      otherLiveOps: stageOps.filter((op) => op.skyhook !== name && op.node === work.node.name && isLive(op)),
    });
    work.state = flow.state;
    if (flow.cordon) nodeMetadata.push(flow.cordon);
    if (flow.hold) holds.set(work.node.name, flow.hold);
    if (flow.drainBlockers.length > 0) drainBlockers.set(work.node.name, flow.drainBlockers);
    const actions = advanceNode(work, flow.plan, name, spec.serial === true, settings, now);
    creates.push(...actions.creates.map(flow.decorate));
    deletes.push(...actions.deletes);
    if (actions.requeueAfterMs !== undefined)
      requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, actions.requeueAfterMs);
    nodeStatus[work.node.name] = Object.values(work.state).some((entry) => entry.state === 'erroring')
      ? 'erroring'
      : 'in_progress';
    priority[work.node.name] ??= new Date(now).toISOString();
  }
  // Finished ops go once their Job's retention has passed (the Job itself is gone by then).
  for (const work of works) {
    if (work.record.malformed) continue;
    const retention = expiredOps(work, settings.finishedOpRetentionMs, now);
    for (const op of retention.expired) deletes.push(deleteOp(work, op, 'finished and kept for the retention period'));
    if (retention.nextExpiry !== undefined)
      requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, retention.nextExpiry - now);
  }
  for (const node of Object.keys(priority))
    if (!targetedNames.has(node) || nodeStatus[node] === 'complete') delete priority[node];
  // The cordon is held until the node is complete for this SCR (or no longer targeted). Released
  // before the nodes admitted in this pass are cordoned, so a watcher never sees more cordoned
  // nodes than the budget allows.
  const releases: PlannerAction[] = [];
  for (const node of nodes) {
    if (!Object.hasOwn(node.annotations, claim)) continue;
    if (targetedNames.has(node.name) && nodeStatus[node.name] !== 'complete') continue;
    releases.push({
      kind: 'releaseNodeCordon',
      node: node.name,
      claim,
      reason: targetedNames.has(node.name)
        ? `Skyhook ${name} complete on the node`
        : `node no longer targeted by Skyhook ${name}`,
    });
  }
  const holdReports: NodeHoldReport[] = works.map((work) => {
    const report: NodeHoldReport = { node: work.node, drainBlockers: drainBlockers.get(work.node.name) ?? [] };
    const hold = nodeStatus[work.node.name] === 'complete' ? undefined : holds.get(work.node.name);
    if (hold) report.hold = hold;
    return report;
  });
  const holdWrites = holdAnnotations(name, holdReports);
  nodeMetadata.push(...holdWrites.actions);
  events.push(...holdWrites.events);

  const suspends: PlannerAction[] = ops
    .filter(
      (op) => (op.phase === 'Pending' || op.phase === 'Running') && !op.deleting && (op.suspended === true) !== paused,
    )
    .map((op) => ({ kind: 'suspendStageOp', name: op.name, suspend: paused }));

  const garbled = new Map(
    works.map((work) => {
      const found = garbledNodeRecords(work.node, name);
      return [
        work,
        {
          recordedOps: found.recordedOps,
          found: [...found.status, ...(found.recordedOps ? [`annotation ${nodeAnnotations.recordedOps(name)}`] : [])],
        },
      ];
    }),
  );
  // Node writes (state and status together: one patch per node). A node newly taking a budget slot
  // is written after the finished nodes' cordons are released (below), so a watcher never sees
  // more nodes cordoned or in progress than the budget allows.
  const nodeWrites: PlannerAction[] = [];
  const takingSlot: PlannerAction[] = [];
  const takesSlot = (status: SkyhookStatusValue | undefined): boolean =>
    status === 'in_progress' || status === 'erroring';
  for (const work of works) {
    const status = nodeStatus[work.node.name]!;
    const writes = takesSlot(status) && !takesSlot(work.record.status) ? takingSlot : nodeWrites;
    if (!work.record.malformed) {
      const annotation = serializeNodeState(work.state);
      const current = work.node.annotations[nodeAnnotations.nodeState(name)];
      if (annotation !== (current ?? '{}'))
        writes.push({ kind: 'writeNodeState', node: work.node.name, skyhook: name, state: work.state, annotation });
      // Next to the state, so the reconciler sends both in one patch: an outcome and its mark land together.
      const recordedOps = recordedOpsUpdate(work, garbled.get(work)?.recordedOps === true);
      if (recordedOps !== undefined)
        writes.push({
          kind: 'setNodeAnnotations',
          node: work.node.name,
          annotations: { [nodeAnnotations.recordedOps(name)]: recordedOps },
        });
    }
    const rewritten = garbled.get(work)?.found ?? [];
    if (rewritten.length > 0) events.push(garbledRecordsEvent(work.node.name, name, rewritten));
    if (status !== work.record.status || work.record.version !== settings.operatorVersion || rewritten.length > 0) {
      writes.push({
        kind: 'setNodeStatus',
        node: work.node.name,
        skyhook: name,
        status,
        operatorVersion: settings.operatorVersion,
        conditions: nodeSkyhookConditions(name, status === 'complete', work.state),
      });
      if (status === 'complete' && work.record.status !== 'complete') {
        // Said in the Event of the stage that completed the node when there is one (one Event, not two).
        const done = `Skyhook [${name}] complete.`;
        const lastStage = events.findLast(
          (event) =>
            event.involved.kind === 'Node' &&
            event.involved.name === work.node.name &&
            event.reason === 'State' &&
            event.type === 'Normal',
        );
        if (lastStage) lastStage.message = `${lastStage.message}. ${done}`;
        else
          events.push({
            kind: 'event',
            involved: { kind: 'Node', name: work.node.name },
            type: 'Normal',
            reason: 'State',
            message: done,
          });
      }
    }
  }

  const becameComplete =
    Object.values(nodeStatus).every((status) => status === 'complete') && scr.status?.status !== 'complete';
  const statusUpdate = skyhookStatusUpdate({
    skyhook: scr,
    now,
    nodeStatus,
    nodeState: Object.fromEntries(
      works
        .filter((work) => !work.record.malformed && Object.keys(work.state).length > 0)
        .map((work) => [work.node.name, work.state]),
    ),
    nodePriority: priority,
    configUpdates,
    paused,
    disabled,
    problems,
    malformedNodes: works.filter((work) => work.record.malformed).map((work) => work.node.name),
    ignoredNodes: works.filter((work) => blockedReason(work) === 'ignored').map((work) => work.node.name),
    untoleratedNodes: works.filter((work) => blockedReason(work) === 'taint').map((work) => work.node.name),
    lastCreated: creates.at(-1),
    ...(missingPolicy !== undefined ? { missingPolicy } : {}),
    holdConditions: holdConditions(holdReports, targeted.length),
    inputWarning: inputWarningCondition(
      inputWarnings({
        skyhook: scr,
        skyhooks: skyhooks ?? [scr],
        targeted,
        compartments: rollout.compartments,
        ...(policy ? { policy } : {}),
      }),
    ),
    compartmentStatuses: compartmentStatuses(
      rollout,
      nodeStatus,
      resetsBatchState(spec, policy?.spec) && (versionChanged || becameComplete),
    ),
  });
  events.push(...statusUpdate.events);
  // Before the state write that records the failure: a crash in between repeats the Event (aggregated) rather than losing it.
  const failureReports: PlannerAction[] = works.flatMap((work) =>
    work.recorded
      .filter((op) => op.phase === 'Failed')
      .map((op) => ({ kind: 'reportFailedStage' as const, name: op.name })),
  );
  const actions: PlannerAction[] = [
    ...failureReports,
    ...upserts,
    ...nodeWrites,
    ...releases,
    ...takingSlot,
    ...nodeMetadata,
    ...deletes,
    ...suspends,
    ...creates,
  ];
  if (statusUpdate.status) actions.push({ kind: 'setSkyhookStatus', skyhook: name, status: statusUpdate.status });
  actions.push(...events);
  return requeueAfterMs === undefined ? { actions, nodeStatus } : { actions, nodeStatus, requeueAfterMs };

  /** Why a node the rollout did not admit waits, naming what holds it. */
  function holdOutside(work: NodeWork, status: SkyhookStatusValue): NodeHold | undefined {
    if (status === 'complete' || status === 'paused' || status === 'disabled') return undefined;
    if (work.record.malformed) return malformedHold(name, work.record.malformed);
    if (isIgnored(work.node)) return { reason: 'NodeIgnored', detail: `label ${IGNORE_NODE_LABEL}=true` };
    const taints = untoleratedTaints(work.node, spec, settings.runtimeRequiredTaint);
    if (taints.length > 0)
      return {
        reason: 'TaintNotTolerable',
        detail: taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', '),
      };
    if (missingPolicy !== undefined)
      return { reason: 'DeploymentPolicyNotFound', detail: missingPolicyMessage(missingPolicy) };
    if (problems.length > 0) return { reason: 'InvalidSpec', detail: problems.join('; ') };
    const blockers = gates.blockersOn(work.node.name);
    if (blockers.length > 0) return { reason: 'HigherPrioritySkyhook', detail: [...new Set(blockers)].join(', ') };
    return rollout.holdOf(work.node.name);
  }
}
