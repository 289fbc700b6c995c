/**
 * One arbiter per operator process, whoever asks first: the Skyhook, NodeOp and maintenance
 * controllers are started separately by the registry, but a cluster-wide budget is only kept if all
 * of them reserve from the same instance (a check and its reservation are synchronous, so they never
 * interleave). Keyed by the runtime's informer factory, so each test harness or operator start gets
 * its own. A controller's start calls `sharedDisruption(runtime)`; the registry needs no wiring.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { DisruptionBudget } from '../../api/disruption-budget.js';
import { API_GROUP, API_VERSION, GROUP_VERSION, KINDS } from '../../api/names.js';
import { isNotFound } from '../../kube/client.js';
import type { Informer } from '../../kube/informer.js';
import { customResourcePath } from '../../kube/list-watch.js';
import type { InformerFactory, OperatorRuntime } from '../../kube/runtime.js';
import { cachedNode } from '../cached-objects.js';
import { ClusterDisruptionArbiter, type RefusedWait } from './cluster-arbiter.js';
import { DisruptionMetrics } from './disruption-metrics.js';

/** The Event reason on a DisruptionBudget when a node starts waiting for it (the same word as the planner's hold). */
export const CLUSTER_BUDGET_REASON = 'ClusterBudget';

export interface SharedDisruption {
  arbiter: ClusterDisruptionArbiter;
  /** Absent when the DisruptionBudget CRD is not installed: no cluster budget applies (today's behaviour). */
  budgets?: Informer<DisruptionBudget>;
  nodes: Informer<V1Node>;
  metrics: DisruptionMetrics;
}

const shared = new WeakMap<InformerFactory, Promise<SharedDisruption>>();

export function sharedDisruption(runtime: OperatorRuntime, syncTimeoutMs = 120_000): Promise<SharedDisruption> {
  let entry = shared.get(runtime.informers);
  if (!entry) {
    entry = startShared(runtime, syncTimeoutMs);
    shared.set(runtime.informers, entry);
  }
  return entry;
}

/**
 * Is the DisruptionBudget kind served? An operator upgraded without its new CRD (Helm never upgrades
 * the CRDs of `crds/`), or a NodeOp-only install, runs without cluster budgets rather than never
 * becoming ready; it says so in its log.
 */
async function budgetsServed(runtime: OperatorRuntime): Promise<boolean> {
  const resource = { group: API_GROUP, version: API_VERSION, plural: KINDS.disruptionBudget.plural };
  try {
    await runtime.clients.custom.listClusterCustomObject({ ...resource, limit: 1 });
    return true;
  } catch (e) {
    if (!isNotFound(e)) throw e;
    runtime.logger.warn(
      { crd: `${resource.plural}.${API_GROUP}` },
      'the DisruptionBudget CRD is not installed: no cluster-wide disruption budget applies until it is and the operator restarts',
    );
    return false;
  }
}

async function startShared(runtime: OperatorRuntime, syncTimeoutMs: number): Promise<SharedDisruption> {
  const budgets = (await budgetsServed(runtime))
    ? runtime.informers.informer<DisruptionBudget>(
        customResourcePath(API_GROUP, API_VERSION, KINDS.disruptionBudget.plural),
      )
    : undefined;
  const nodes = runtime.informers.informer<V1Node>('/api/v1/nodes', { transform: cachedNode });
  await Promise.all([budgets?.waitForSync(syncTimeoutMs), nodes.waitForSync(syncTimeoutMs)]);
  const metrics = new DisruptionMetrics(runtime.metrics.registry);
  const log = runtime.logger.child({ component: 'disruption-arbiter' });
  const onRefused = (wait: RefusedWait, first: boolean): void => {
    metrics.refusals.inc({ budget_name: wait.budget, holder_kind: wait.holder.split('/', 1)[0] ?? wait.holder });
    if (!first) return;
    log.info({ node: wait.node, holder: wait.holder, budget: wait.budget }, 'node waits for a DisruptionBudget');
    const budget = budgets?.get(wait.budget);
    if (budget)
      runtime.events.record(
        { ...budget, apiVersion: GROUP_VERSION, kind: KINDS.disruptionBudget.kind },
        'Normal',
        CLUSTER_BUDGET_REASON,
        `node ${wait.node}: ${wait.holder} waits: ${wait.reason}`,
      );
  };
  const arbiter = new ClusterDisruptionArbiter(
    { nodes: () => nodes.list(), budgets: () => budgets?.list() ?? [], now: Date.now },
    {
      onRefused,
      onReservationExpired: (node, holder, ageMs) => {
        log.warn(
          { node, holder, ageS: Math.round(ageMs / 1000) },
          'disruption slot granted but its cordon never showed in the node cache; slot released',
        );
        runtime.metrics.writeExpectationExpired('DisruptionReservation');
      },
    },
  );
  // Every node event, so a cordon the cache showed only briefly (lifted again) still ends its reservation.
  nodes.on({ add: (node) => arbiter.observed(node), update: (node) => arbiter.observed(node) });
  return { arbiter, ...(budgets ? { budgets } : {}), nodes, metrics };
}
