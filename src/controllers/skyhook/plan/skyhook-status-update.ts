/**
 * The SCR's next `status` from one planning pass, or nothing when it would not change (so an idle
 * pass writes nothing). Fields the planner does not own (nodeBootIds, nodeOrderOffset) are
 * carried over untouched; compartmentStatuses are the planner's once it is given them.
 */
import type { Condition } from '../../../api/k8s-schemas.js';
import { sameJson } from '../../../util/json-equal.js';
import { legacyConditionType, SKYHOOK_CONDITIONS } from '../../../api/names.js';
import type { CompartmentStatus, Skyhook, SkyhookStatus } from '../../../api/skyhook.js';
import type { NodeState, SkyhookStatusValue } from '../../../api/node-state.js';
import type { CreateStageOp, PlannerEvent } from './planner-types.js';
import {
  aggregateStatus,
  completeNodes,
  type ConditionValue,
  malformedMessage,
  mergeConditions,
  nodesInProgress,
  packageList,
  readyCondition,
  skippedNodesCondition,
  transitionCondition,
  withLegacyMirror,
} from './skyhook-status.js';
import { nameOf } from '../../../api/object-meta.js';
import { fitNodeMaps, objectBytesWithoutStatus, type StatusTrim, trimMessage } from './status-size.js';

export interface StatusUpdateInput {
  skyhook: Skyhook;
  now: number;
  nodeStatus: Record<string, SkyhookStatusValue>;
  nodeState: Record<string, NodeState>;
  nodePriority: Record<string, string>;
  configUpdates: Record<string, string[]>;
  paused: boolean;
  disabled: boolean;
  /** Spec problems CEL cannot catch (dependsOn cycles…): the SCR is blocked until they are fixed. */
  problems: string[];
  malformedNodes: string[];
  ignoredNodes: string[];
  untoleratedNodes: string[];
  lastCreated?: CreateStageOp;
  /** The DeploymentPolicy the SCR names but the cluster lacks: the SCR is blocked meanwhile. */
  missingPolicy?: string;
  /** Package images an Enforce PackageTrustPolicy refused (package-trust.ts): the SCR is blocked meanwhile. */
  trustRefusal?: { reason: string; refusals: string[] };
  /** Conditions about held nodes (Blocked, DrainBlocked), and the types to drop when nothing holds. */
  holdConditions?: { wanted: ConditionValue[]; remove: string[] };
  compartmentStatuses?: Record<string, CompartmentStatus>;
  /** The InputWarning condition (input-warnings.ts), when there is something to warn about. */
  inputWarning?: ConditionValue;
  /** RFC 3339: the next maintenance window opening, while nodes wait for one (else the field goes). */
  nextMaintenanceWindow?: string;
}

export interface StatusUpdate {
  status?: SkyhookStatus;
  events: PlannerEvent[];
}

export function skyhookStatusUpdate(input: StatusUpdateInput): StatusUpdate {
  const { skyhook, nodeStatus } = input;
  const name = nameOf(skyhook);
  const previous = skyhook.status ?? {};
  const status = aggregateStatus({
    nodeStatus,
    paused: input.paused,
    disabled: input.disabled,
    blocked: input.problems.length > 0 || input.missingPolicy !== undefined || input.trustRefusal !== undefined,
  });
  // Past a few thousand nodes the per-node maps are cut to keep the object under etcd's limit (status-size.ts).
  const fitted = fitNodeMaps(
    { nodeState: input.nodeState, nodeStatus, nodePriority: input.nodePriority },
    objectBytesWithoutStatus(skyhook),
  );
  const optional = optionalConditions(input, name, fitted.trim);
  const wanted = [...baseConditions(input, status, previous), ...optional.wanted];
  const generation = skyhook.metadata.generation;
  const { nextMaintenanceWindow: _previousWindow, ...carried } = previous;
  const next: SkyhookStatus = {
    ...carried,
    status,
    nodeState: fitted.maps.nodeState,
    nodeStatus,
    nodePriority: fitted.maps.nodePriority,
    configUpdates: input.configUpdates,
    nodesInProgress: nodesInProgress(nodeStatus),
    completeNodes: completeNodes(nodeStatus),
    packageList: packageList(skyhook.spec),
    ...(input.compartmentStatuses ? { compartmentStatuses: input.compartmentStatuses } : {}),
    ...(input.nextMaintenanceWindow !== undefined ? { nextMaintenanceWindow: input.nextMaintenanceWindow } : {}),
    conditions: mergeConditions(
      previous.conditions ?? [],
      wanted,
      optional.remove,
      new Date(input.now).toISOString(),
      generation,
    ),
  };
  if (status === 'complete' && generation !== undefined) next.observedGeneration = generation;
  const events: PlannerEvent[] = [];
  if (previous.status !== undefined && previous.status !== status) {
    events.push({
      kind: 'event',
      involved: { kind: 'Skyhook', name },
      type: status === 'erroring' ? 'Warning' : 'Normal',
      reason: 'State',
      message: `Skyhook transitioned [${previous.status}] -> [${status}]`,
    });
  }
  return sameJson(next, previous) ? { events } : { status: next, events };
}

/** The conditions every status carries: Ready, Transition, and the ignored and untolerated nodes. */
function baseConditions(
  input: StatusUpdateInput,
  status: SkyhookStatusValue,
  previous: SkyhookStatus,
): ConditionValue[] {
  const ready = readyCondition(status, input.nodeStatus);
  return [
    ready,
    transitionCondition(
      previous.status,
      status,
      previousMessage(previous.conditions, legacyConditionType(SKYHOOK_CONDITIONS.transition)) ?? ready.message,
    ),
    ...withLegacyMirror(
      skippedNodesCondition(SKYHOOK_CONDITIONS.nodesIgnored, input.ignoredNodes, {
        one: 'has ignore label set',
        many: 'have ignore label set',
        none: 'No nodes have ignore label set.',
      }),
    ),
    ...withLegacyMirror(
      skippedNodesCondition(SKYHOOK_CONDITIONS.taintNotTolerable, input.untoleratedNodes, {
        one: 'has taints that are not tolerable',
        many: 'have taints that are not tolerable',
        none: 'All nodes have tolerable taints.',
      }),
    ),
  ];
}

/** The conditions present only while something is wrong or under way, and the types to drop otherwise. */
function optionalConditions(
  input: StatusUpdateInput,
  name: string,
  trim: StatusTrim | undefined,
): { wanted: ConditionValue[]; remove: string[] } {
  const wanted: ConditionValue[] = [];
  const remove: string[] = [];
  const optional = (type: string, reason: string, message: string | undefined): void => {
    if (message !== undefined) wanted.push(...withLegacyMirror({ type, status: 'True', reason, message }));
    else remove.push(type, legacyConditionType(type));
  };
  optional(
    SKYHOOK_CONDITIONS.nodeStateMalformed,
    'ParseError',
    input.malformedNodes.length === 0 ? undefined : malformedMessage(input.malformedNodes, name),
  );
  optional(
    SKYHOOK_CONDITIONS.invalidSpec,
    'InvalidSpec',
    input.problems.length === 0 ? undefined : input.problems.join('; '),
  );
  optional(
    SKYHOOK_CONDITIONS.deploymentPolicyNotFound,
    'DeploymentPolicyNotFound',
    input.missingPolicy === undefined ? undefined : missingPolicyMessage(input.missingPolicy),
  );
  optional(
    SKYHOOK_CONDITIONS.packageTrustRefused,
    input.trustRefusal?.reason ?? '',
    input.trustRefusal === undefined ? undefined : trustRefusalMessage(input.trustRefusal.refusals),
  );
  optional(SKYHOOK_CONDITIONS.statusTrimmed, 'ObjectSizeLimit', trim ? trimMessage(trim, name) : undefined);
  if (input.inputWarning) wanted.push(...withLegacyMirror(input.inputWarning));
  else remove.push(SKYHOOK_CONDITIONS.inputWarning, legacyConditionType(SKYHOOK_CONDITIONS.inputWarning));
  for (const condition of input.holdConditions?.wanted ?? []) wanted.push(...withLegacyMirror(condition));
  for (const type of input.holdConditions?.remove ?? []) remove.push(type, legacyConditionType(type));
  if (input.lastCreated) {
    const op = input.lastCreated;
    wanted.push(
      ...withLegacyMirror({
        type: SKYHOOK_CONDITIONS.applyPackage,
        status: 'True',
        reason: 'ApplyPackage',
        message: `Applying package [${op.package.name}:${op.package.version}] to node [${op.node}]`,
      }),
    );
  }
  return { wanted, remove };
}

/** The refusals, and what holds meanwhile. */
export const trustRefusalMessage = (refusals: string[]): string =>
  `${refusals.join('; ')} (nothing new of this Skyhook starts until then; work in progress is kept)`;

/** Names the fix too: nothing of the SCR runs until either is done. */
export const missingPolicyMessage = (policy: string): string =>
  `DeploymentPolicy "${policy}" not found; create it, or change spec.deploymentPolicy (nothing starts until then, work in progress is kept)`;

function previousMessage(conditions: Condition[] | undefined, type: string): string | undefined {
  return conditions?.find((condition) => condition.type === type)?.message;
}
