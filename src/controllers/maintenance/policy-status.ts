/**
 * A MaintenancePolicy's status from one reconcile's outcome (pure), and how often it is written.
 * As with Skyhooks (controllers/skyhook/status-write-pacing.ts), a change someone acts on or waits for
 * is written at once: who holds a slot and in which phase, who waits and why, a completion, the
 * conditions, observedGeneration. A change of a message only (a drain's progress, what the daemon
 * says it waits for) waits up to STATUS_PROGRESS_INTERVAL_MS to be written with the next one.
 */
import type { Condition } from '../../api/k8s-schemas.js';
import type {
  MaintenanceCompletion,
  MaintenanceHolder,
  MaintenancePolicyStatus,
  QueuedRequest,
} from '../../api/maintenance-policy.js';
import { sameJson } from '../../util/json-equal.js';
import { STATUS_PROGRESS_INTERVAL_MS } from '../skyhook/status-write-pacing.js';

export const MAINTENANCE_CONDITIONS = {
  /** True while a slot is free; False (MaxConcurrentReached) names the holders. */
  slotsAvailable: 'SlotsAvailable',
  /** True when the spec has what the API server cannot refuse (a time zone or cron field out of range). */
  invalidSpec: 'InvalidSpec',
} as const;

export interface StatusInput {
  generation?: number;
  matchedNodes: number;
  maxConcurrent: number;
  holders: MaintenanceHolder[];
  queue: QueuedRequest[];
  completed: MaintenanceCompletion[];
  previous: MaintenancePolicyStatus | undefined;
  keepCompletions: number;
  /** What is wrong with the spec beyond the API server's checks (rebootWindows), if anything. */
  specErrors: string[];
  now: number;
}

function condition(
  input: StatusInput,
  type: string,
  status: 'True' | 'False',
  reason: string,
  message: string,
): Condition {
  const previous = input.previous?.conditions?.find((c) => c.type === type);
  return {
    type,
    status,
    reason,
    message,
    lastTransitionTime: previous?.status === status ? previous.lastTransitionTime : new Date(input.now).toISOString(),
    ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}),
  };
}

function slotsCondition(input: StatusInput): Condition {
  const full = input.holders.length >= input.maxConcurrent;
  const message = full
    ? `${input.holders.length} of ${input.maxConcurrent} slots held: ${input.holders.map((h) => h.node).join(', ')}`
    : `${input.maxConcurrent - input.holders.length} of ${input.maxConcurrent} slots free`;
  return full
    ? condition(input, MAINTENANCE_CONDITIONS.slotsAvailable, 'False', 'MaxConcurrentReached', message)
    : condition(input, MAINTENANCE_CONDITIONS.slotsAvailable, 'True', 'SlotsFree', message);
}

function invalidSpecCondition(input: StatusInput): Condition {
  return input.specErrors.length > 0
    ? condition(input, MAINTENANCE_CONDITIONS.invalidSpec, 'True', 'InvalidRebootWindow', input.specErrors.join('; '))
    : condition(input, MAINTENANCE_CONDITIONS.invalidSpec, 'False', 'Valid', 'the spec is valid');
}

export function policyStatus(input: StatusInput): MaintenancePolicyStatus {
  const recentCompletions = [...input.completed, ...(input.previous?.recentCompletions ?? [])].slice(
    0,
    input.keepCompletions,
  );
  return {
    ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}),
    matchedNodes: input.matchedNodes,
    holderCount: input.holders.length,
    queueLength: input.queue.length,
    holders: input.holders,
    queue: input.queue,
    recentCompletions,
    conditions: [slotsCondition(input), invalidSpecCondition(input)],
  };
}

const same = (a: unknown, b: unknown): boolean => sameJson(a ?? null, b ?? null);

/** A change someone acts on or waits for (see the module comment); messages alone are progress. */
export function isDecisiveChange(current: MaintenancePolicyStatus, next: MaintenancePolicyStatus): boolean {
  const holders = (s: MaintenancePolicyStatus) => (s.holders ?? []).map((h) => [h.node, h.phase, h.grantedAt]);
  const queue = (s: MaintenancePolicyStatus) => (s.queue ?? []).map((q) => [q.node, q.reason, q.requestedAt]);
  const conditions = (s: MaintenancePolicyStatus) => (s.conditions ?? []).map((c) => [c.type, c.status, c.reason]);
  return (
    current.observedGeneration !== next.observedGeneration ||
    current.matchedNodes !== next.matchedNodes ||
    !same(holders(current), holders(next)) ||
    !same(queue(current), queue(next)) ||
    !same(current.recentCompletions, next.recentCompletions) ||
    !same(conditions(current), conditions(next))
  );
}

export type StatusWrite = { write: true } | { write: false; retryInMs: number };

export class PolicyStatusPacing {
  private readonly lastWrite = new Map<string, number>();
  private readonly intervalMs: number;

  constructor(intervalMs = STATUS_PROGRESS_INTERVAL_MS) {
    this.intervalMs = intervalMs;
  }

  decide(
    policy: string,
    current: MaintenancePolicyStatus | undefined,
    next: MaintenancePolicyStatus,
    now: number,
  ): StatusWrite {
    const stripped = (s: MaintenancePolicyStatus | undefined) => ({ ...s, conditions: conditionsOf(s) });
    if (sameJson(stripped(current), stripped(next))) return { write: false, retryInMs: Number.POSITIVE_INFINITY };
    const last = this.lastWrite.get(policy);
    if (last === undefined || isDecisiveChange(current ?? {}, next)) return { write: true };
    const due = last + this.intervalMs;
    return now >= due ? { write: true } : { write: false, retryInMs: due - now };
  }

  written(policy: string, now: number): void {
    this.lastWrite.set(policy, now);
  }

  forget(policy: string): void {
    this.lastWrite.delete(policy);
  }
}

/** Conditions without their transition times, which a rebuilt status always carries over. */
const conditionsOf = (s: MaintenancePolicyStatus | undefined) =>
  (s?.conditions ?? []).map(({ lastTransitionTime: _t, ...rest }) => rest);
