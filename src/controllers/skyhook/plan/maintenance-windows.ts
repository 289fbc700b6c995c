/**
 * Maintenance windows in the planner: whether a node may newly start an interrupt at `now`, and if
 * not, the hold it shows (`OutsideMaintenanceWindow`, naming the windows and when the next opens).
 * A node is governed by the windows of its SCR's DeploymentPolicy and of every DisruptionBudget
 * covering it: each source must be open (within a source, any of its windows). Pure: `now` is input.
 */
import type { LabelSelector } from '../../../api/k8s-schemas.js';
import { selectorMatches } from '../../../api/label-selector.js';
import type { MaintenanceWindow } from '../../../api/maintenance-window.js';
import { describeWindow, nextWindowOpen, windowError, windowsOpen } from '../../../util/time-window.js';
import type { NodeHold } from './node-holds.js';
import type { NodeView } from './planner-types.js';

export const OUTSIDE_WINDOW_REASON = 'OutsideMaintenanceWindow';

/** One object's list of windows (`spec.maintenanceWindows`). */
export interface WindowSource {
  kind: 'DeploymentPolicy' | 'DisruptionBudget';
  name: string;
  windows: readonly MaintenanceWindow[];
}

/** What the windows of a node say now: open, or closed with the hold to show and the next opening. */
export type WindowVerdict = { open: true } | { open: false; hold: NodeHold; nextOpen?: number };

const OPEN: WindowVerdict = { open: true };
/** Rounds of "latest next opening of the sources" before giving up on finding them open together. */
const MAX_ROUNDS = 16;
/** Longest wait the planner asks to be woken after: a longer timer would overflow (Node caps at 2^31-1 ms). */
export const MAX_WINDOW_REQUEUE_MS = 12 * 3_600_000;

const sourceName = (source: WindowSource): string => `${source.kind} "${source.name}"`;

/** The verdict for these sources at `now` (no source, or only empty lists: open). */
export function windowVerdict(sources: readonly WindowSource[], now: number): WindowVerdict {
  const active = sources.filter((source) => source.windows.length > 0);
  if (active.length === 0) return OPEN;
  const at = new Date(now);
  if (active.every((source) => windowsOpen(source.windows, at))) return OPEN;
  const nextOpen = nextOpenTogether(active, now);
  const when = nextOpen === undefined ? 'no window opens in the next two weeks' : `next opens ${iso(nextOpen)}`;
  const detail = `interrupts wait for a maintenance window (${active.map(describeSource).join('; ')}); ${when}`;
  const hold = { reason: OUTSIDE_WINDOW_REASON, detail };
  return nextOpen === undefined ? { open: false, hold } : { open: false, hold, nextOpen };
}

/** The first instant at which every source has a window open (each source's next opening, until they agree). */
function nextOpenTogether(sources: readonly WindowSource[], now: number): number | undefined {
  let at = now;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let latest = at;
    for (const source of sources) {
      const next = nextWindowOpen(source.windows, new Date(at));
      if (next === undefined) return undefined;
      latest = Math.max(latest, next.getTime());
    }
    if (sources.every((source) => windowsOpen(source.windows, new Date(latest)))) return latest;
    // Past the latest opening some source closed again: look from one second on.
    at = latest === at ? at + 1000 : latest;
  }
  return undefined;
}

function describeSource(source: WindowSource): string {
  const parts = source.windows.map((window, index) => {
    const error = windowError(window);
    return error === undefined ? describeWindow(window) : `maintenanceWindows[${index}] is invalid: ${error}`;
  });
  return `${sourceName(source)}: ${parts.join(', ')}`;
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/** The wake-up delay for a next opening: at it, but never further than MAX_WINDOW_REQUEUE_MS. */
export function windowRequeueMs(nextOpen: number | undefined, now: number): number {
  return nextOpen === undefined ? MAX_WINDOW_REQUEUE_MS : Math.min(Math.max(0, nextOpen - now), MAX_WINDOW_REQUEUE_MS);
}

/**
 * The verdict of each node in one pass: the sources every node is under (the policy's) plus those
 * covering that node (its DisruptionBudgets'), computed once per distinct set of sources.
 */
export function nodeWindowVerdicts(
  shared: readonly WindowSource[],
  covering: (node: NodeView) => readonly WindowSource[],
  now: number,
): (node: NodeView) => WindowVerdict {
  const memo = new Map<string, WindowVerdict>();
  return (node) => {
    const own = covering(node).filter((source) => source.windows.length > 0);
    if (shared.length === 0 && own.length === 0) return OPEN;
    const key = own.map((source) => source.name).join('\u0000');
    let verdict = memo.get(key);
    if (verdict === undefined) {
      verdict = windowVerdict([...shared, ...own], now);
      memo.set(key, verdict);
    }
    return verdict;
  };
}

/** The policy's windows as a source list (empty without a policy or windows). */
export function policyWindowSources(
  policy: { metadata: { name?: string }; spec: { maintenanceWindows?: MaintenanceWindow[] } } | undefined,
): WindowSource[] {
  const windows = policy?.spec.maintenanceWindows ?? [];
  return windows.length === 0 ? [] : [{ kind: 'DeploymentPolicy', name: policy?.metadata.name ?? '', windows }];
}

/** The windows of the DisruptionBudgets covering a node (each budget with windows is one source). */
export function budgetWindowSources(
  budgets:
    | readonly {
        metadata: { name?: string };
        spec: { nodeSelector?: LabelSelector; maintenanceWindows?: MaintenanceWindow[] };
      }[]
    | undefined,
): (node: NodeView) => WindowSource[] {
  const windowed = (budgets ?? []).filter((budget) => (budget.spec.maintenanceWindows ?? []).length > 0);
  if (windowed.length === 0) return () => [];
  return (node) =>
    windowed
      .filter((budget) => selectorMatches(budget.spec.nodeSelector, node.labels))
      .map((budget) => ({
        kind: 'DisruptionBudget' as const,
        name: budget.metadata.name ?? '',
        windows: budget.spec.maintenanceWindows!,
      }));
}

/** RFC 3339 of a next opening, for `status.nextMaintenanceWindow`. */
export const nextWindowTimestamp = iso;
