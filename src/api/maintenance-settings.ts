/**
 * A MaintenancePolicy's spec as its two readers use it, with every default filled in: which policy
 * serves a node (the daemon and the operator must agree, so one function decides), the protocols'
 * host paths, the drain options and the TTL. Pure.
 */
import type { DrainOptions } from './nodeop.js';
import { selectorMatches } from './label-selector.js';
import { MAINTENANCE_DEFAULTS, type MaintenancePolicy, type MaintenancePolicySpec } from './maintenance-policy.js';
import { parseDurationMs } from '../util/duration.js';
import { compareText } from '../util/compare.js';

/**
 * The policy serving a node: the first by name whose nodeSelector matches the node's labels (a node
 * matched by two policies is served by one, never both: two slots on one node would be two budgets).
 * A policy being deleted serves nobody.
 */
export function policyForNode<P extends Pick<MaintenancePolicy, 'metadata' | 'spec'>>(
  policies: readonly P[],
  labels: Record<string, string>,
): P | undefined {
  return [...policies]
    .filter((p) => !p.metadata.deletionTimestamp && selectorMatches(p.spec.nodeSelector, labels))
    .sort((a, b) => compareText(a.metadata.name ?? '', b.metadata.name ?? ''))[0];
}

export interface EffectiveProtocols {
  maintenance?: { requiredPath: string; inProgressPath: string };
  reboot?: { sentinel: { path: string } | { command: string[] }; rebootDelayMs: number };
}

export function effectiveProtocols(spec: MaintenancePolicySpec): EffectiveProtocols {
  const m = spec.protocols?.maintenance ?? {};
  const r = spec.protocols?.reboot;
  const maintenance =
    m.enabled === false
      ? undefined
      : {
          requiredPath: m.requiredPath ?? MAINTENANCE_DEFAULTS.requiredPath,
          inProgressPath: m.inProgressPath ?? MAINTENANCE_DEFAULTS.inProgressPath,
        };
  const reboot =
    r === undefined || r.enabled === false
      ? undefined
      : {
          sentinel: r.sentinelCommand
            ? { command: [...r.sentinelCommand] }
            : { path: r.sentinelPath ?? MAINTENANCE_DEFAULTS.rebootSentinelPath },
          rebootDelayMs: r.rebootDelay ? parseDurationMs(r.rebootDelay) : 0,
        };
  return { ...(maintenance ? { maintenance } : {}), ...(reboot ? { reboot } : {}) };
}

/** The drain options the NodeOp drain runs with (jobs/drain.ts), or undefined when draining is off. */
export function effectiveDrainOptions(spec: MaintenancePolicySpec): DrainOptions | undefined {
  const d = spec.drainOptions ?? {};
  if (d.enabled === false) return undefined;
  return { ...d, enabled: true, force: d.force ?? true, deleteEmptyDirData: d.deleteEmptyDirData ?? true };
}

/** lockTTL in ms; undefined = a holder never expires. */
export function lockTtlMs(spec: MaintenancePolicySpec): number | undefined {
  if (!spec.lockTTL) return undefined;
  const ms = parseDurationMs(spec.lockTTL);
  return ms > 0 ? ms : undefined;
}

export const maxConcurrentOf = (spec: MaintenancePolicySpec): number => spec.maxConcurrent ?? 1;
