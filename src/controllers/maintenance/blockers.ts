/**
 * What holds a node's reboot slot back even when the slot is free (kured's blockers, §C.6 of the
 * kustodian/kured digest): pods on the node matching a blocking pod selector (not Succeeded, Failed or
 * Unknown), and Prometheus alerts that count under the policy's filter (cluster-wide, not per node).
 * The maintenance controller calls `checkRebootBlockers` for a reboot request right before it would
 * grant the slot; a blocked request keeps its place in the queue with the reason shown in the
 * policy's status (and an Event), and the controller looks again after its recheck interval.
 *
 * The controller depends only on `RebootBlockerCheck` (it takes one as an option, defaulting to
 * `checkRebootBlockers`). Inside, the decision is pure (`decideBlockers`) and the I/O is two narrow
 * functions (`BlockerDeps`), so a test or a cache-backed caller can replace them. Any error while
 * looking blocks, as in kured: a reboot is never let through because a check could not be made.
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { LabelSelector } from '../../api/k8s-schemas.js';
import type { MaintenancePolicySpec } from '../../api/maintenance-policy.js';
import { selectorMatches } from '../../api/label-selector.js';
import { errorMessage } from '../../kube/errors.js';
import { activeAlertNames, queryAlerts, type AlertFilter, type AlertSample } from '../../kube/prometheus-alerts.js';

/**
 * The Prometheus alert gate of a policy (kured's `--prometheus-url`, `--alert-filter-regexp`,
 * `--alert-filter-match-only`, `--alert-firing-only`; the MaintenancePolicy's `spec.alertGate` fits).
 */
export interface AlertGateSpec {
  /** Base URL of the Prometheus HTTP API, e.g. `http://prometheus.monitoring:9090`. */
  prometheusUrl: string;
  /** Regular expression over alert names: ignored alerts, or with `matchOnly` the only ones that count. */
  alertFilterRegexp?: string;
  matchOnly?: boolean;
  /** Only firing alerts hold (pending ones do not). */
  firingOnly?: boolean;
}

/** The parts of a MaintenancePolicy's spec the blockers read. */
export interface RebootBlockerSpec {
  /** Pods on the node matching any of these hold the reboot (kured's `--blocking-pod-selector`). */
  blockingPodSelectors?: LabelSelector[];
  alertGate?: AlertGateSpec;
}

/** The parts of a pod the decision reads (a V1Pod fits). */
export interface PodLike {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: { nodeName?: string };
  status?: { phase?: string };
}

export const BLOCKER_REASONS = {
  /** Pods matching a blocking pod selector run on the node (or they could not be listed). */
  blockingPods: 'BlockingPods',
  /** Alerts that count are active (or Prometheus could not be asked). */
  alerts: 'ActiveAlerts',
} as const;

/** Not blocked, or blocked with a reason name (`BlockingPods`, `ActiveAlerts`) and what blocks. */
export type BlockerDecision =
  | { blocked: false }
  | { blocked: true; reason: (typeof BLOCKER_REASONS)[keyof typeof BLOCKER_REASONS]; message: string };

export interface BlockerDeps {
  /** The pods bound to `node` (any phase; the decision drops finished ones). */
  podsOnNode(node: string): Promise<PodLike[]>;
  /** The samples of Prometheus' `ALERTS` vector at `url`. */
  alerts(url: string): Promise<AlertSample[]>;
}

const FINISHED_PHASES = new Set(['Succeeded', 'Failed', 'Unknown']);
/** At most this many pods or alerts are named in a message (the status stays small). */
const NAMED = 5;

/** `<namespace>/<name>` of each pod on `node` matching a selector and not finished, sorted (pure). */
export function blockingPods(pods: readonly PodLike[], node: string, selectors: readonly LabelSelector[]): string[] {
  if (selectors.length === 0) return [];
  return pods
    .filter((pod) => pod.spec?.nodeName === node && !FINISHED_PHASES.has(pod.status?.phase ?? ''))
    .filter((pod) => selectors.some((selector) => selectorMatches(selector, pod.metadata?.labels ?? {})))
    .map((pod) => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`)
    .sort();
}

const named = (items: readonly string[]): string =>
  items.length > NAMED ? `${items.slice(0, NAMED).join(', ')} and ${items.length - NAMED} more` : items.join(', ');

/** What each check found: a list, or the error that kept it from looking. */
export interface BlockerFindings {
  pods?: { names: string[] } | { error: string };
  alerts?: { names: string[] } | { error: string };
}

/** Blocked when either check found something or failed; pods are reported first (pure). */
export function decideBlockers(findings: BlockerFindings): BlockerDecision {
  const { pods, alerts } = findings;
  if (pods && 'error' in pods)
    return {
      blocked: true,
      reason: BLOCKER_REASONS.blockingPods,
      message: `could not list the node's pods: ${pods.error}`,
    };
  if (pods && pods.names.length > 0)
    return {
      blocked: true,
      reason: BLOCKER_REASONS.blockingPods,
      message: `blocking pods on the node: ${named(pods.names)}`,
    };
  if (alerts && 'error' in alerts)
    return { blocked: true, reason: BLOCKER_REASONS.alerts, message: `could not query alerts: ${alerts.error}` };
  if (alerts && alerts.names.length > 0)
    return { blocked: true, reason: BLOCKER_REASONS.alerts, message: `active alerts: ${named(alerts.names)}` };
  return { blocked: false };
}

const alertFilterOf = (gate: AlertGateSpec): AlertFilter => ({
  ...(gate.alertFilterRegexp ? { regexp: gate.alertFilterRegexp } : {}),
  ...(gate.matchOnly !== undefined ? { matchOnly: gate.matchOnly } : {}),
  ...(gate.firingOnly !== undefined ? { firingOnly: gate.firingOnly } : {}),
});

async function findPods(deps: BlockerDeps, node: string, selectors: LabelSelector[]): Promise<BlockerFindings['pods']> {
  if (selectors.length === 0) return undefined;
  try {
    return { names: blockingPods(await deps.podsOnNode(node), node, selectors) };
  } catch (e) {
    return { error: errorMessage(e) };
  }
}

async function findAlerts(deps: BlockerDeps, gate: AlertGateSpec | undefined): Promise<BlockerFindings['alerts']> {
  if (!gate?.prometheusUrl) return undefined;
  try {
    return { names: activeAlertNames(await deps.alerts(gate.prometheusUrl), alertFilterOf(gate)) };
  } catch (e) {
    return { error: errorMessage(e) };
  }
}

/**
 * May `node` be granted a reboot slot as far as its policy's blockers go? Asks only what the spec
 * configures: no selectors, no pod list; no alert gate, no query.
 */
export async function checkBlockers(
  deps: BlockerDeps,
  spec: RebootBlockerSpec,
  node: string,
): Promise<BlockerDecision> {
  const [pods, alerts] = await Promise.all([
    findPods(deps, node, spec.blockingPodSelectors ?? []),
    findAlerts(deps, spec.alertGate),
  ]);
  return decideBlockers({ ...(pods ? { pods } : {}), ...(alerts ? { alerts } : {}) });
}

/**
 * The API-backed deps: the node's pods by field selector (kured's query, without the label
 * selector: the selectors are matched here, so one list serves all of them), alerts over HTTP.
 */
export function apiBlockerDeps(
  core: CoreV1Api,
  options: { alertTimeoutMs?: number; signal?: AbortSignal } = {},
): BlockerDeps {
  return {
    podsOnNode: async (node) =>
      (
        await core.listPodForAllNamespaces({
          fieldSelector: `spec.nodeName=${node},status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown`,
        })
      ).items,
    alerts: (url) => queryAlerts(url, options.alertTimeoutMs, options.signal),
  };
}

export interface RebootBlockerContext {
  core: CoreV1Api;
  logger: Logger;
  /** Aborted when the controller stops. */
  signal?: AbortSignal;
}

export type RebootBlockerResult = BlockerDecision;

/** What the maintenance controller calls (and a test may replace). */
export type RebootBlockerCheck = (
  ctx: RebootBlockerContext,
  policy: { name: string; spec: MaintenancePolicySpec },
  node: string,
) => Promise<RebootBlockerResult>;

/** The blockers of `policy` for `node`, looked up through the API server and Prometheus. */
export const checkRebootBlockers: RebootBlockerCheck = async (ctx, policy, node) => {
  const decision = await checkBlockers(
    apiBlockerDeps(ctx.core, ctx.signal ? { signal: ctx.signal } : {}),
    policy.spec,
    node,
  );
  if (decision.blocked)
    ctx.logger.debug({ policy: policy.name, node, reason: decision.reason }, `reboot held: ${decision.message}`);
  return decision;
};
