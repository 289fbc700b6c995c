/**
 * Keeps each DisruptionBudget's status (matched, disrupted, waiting, SlotsAvailable) and its gauges
 * current. It decides nothing: the arbiter (shared-arbiter.ts) and the Skyhook planner do; this
 * only reports what they see. A budget is looked at when it or a node changes, and every few
 * seconds anyway, since the arbiter's refusals are in memory and raise no watch event.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { DisruptionBudget } from '../../api/disruption-budget.js';
import { API_GROUP, API_VERSION, KINDS } from '../../api/names.js';
import { nameOf } from '../../api/object-meta.js';
import { Controller } from '../../kube/controller.js';
import { CustomObjects } from '../../kube/custom-objects.js';
import type { Informer } from '../../kube/informer.js';
import type { ReconcileResult } from '../../kube/queue.js';
import type { ControllerFactory, OperatorRuntime, Stoppable } from '../../kube/runtime.js';
import { ignoreNotFound } from '../../kube/writes.js';
import { sameJson } from '../../util/json-equal.js';
import { budgetStatus } from './budget-status.js';
import { sharedDisruption, type SharedDisruption } from './shared-arbiter.js';

const RECHECK_MS = 5_000;

/** What the status reads of a node: labels (matching), annotations (claims, planner waits), the cordon. */
function nodeChangeMatters(node: V1Node, old: V1Node): boolean {
  return (
    node === old ||
    !sameJson(node.metadata?.labels, old.metadata?.labels) ||
    !sameJson(node.metadata?.annotations, old.metadata?.annotations) ||
    (node.spec?.unschedulable === true) !== (old.spec?.unschedulable === true)
  );
}

export function reconcileBudget(
  shared: SharedDisruption & { budgets: Informer<DisruptionBudget> },
  objects: CustomObjects<DisruptionBudget>,
  now: () => number,
): (key: string) => Promise<ReconcileResult> {
  return async (key) => {
    const budget = shared.budgets.get(key);
    if (!budget || budget.metadata.deletionTimestamp) {
      shared.metrics.report(key, undefined);
      return;
    }
    const ledger = shared.arbiter.ledger();
    const status = budgetStatus({
      budget,
      usage: ledger.usage().find((usage) => usage.name === key),
      refusals: shared.arbiter.waits(),
      nodes: shared.nodes.list(),
      now: now(),
    });
    shared.metrics.report(key, {
      max: status.maxDisrupted ?? 0,
      disrupted: status.disruptedCount ?? 0,
      waiting: status.waitingCount ?? 0,
    });
    if (!sameJson(status, budget.status)) await ignoreNotFound(objects.patchStatus(nameOf(budget), status));
    return { requeueAfterMs: RECHECK_MS };
  };
}

export async function startDisruptionBudgetController(runtime: OperatorRuntime): Promise<Stoppable> {
  const shared = await sharedDisruption(runtime);
  const { budgets } = shared;
  // No CRD, no budgets to report on (shared-arbiter.ts logged it).
  if (budgets === undefined) return { stop: async () => undefined };
  const objects = new CustomObjects<DisruptionBudget>(runtime.clients.custom, {
    group: API_GROUP,
    version: API_VERSION,
    plural: KINDS.disruptionBudget.plural,
  });
  const controller = new Controller({
    name: 'disruption-budget',
    reconcile: reconcileBudget({ ...shared, budgets }, objects, Date.now),
    workers: 1,
    logger: runtime.logger,
    metrics: runtime.metrics,
  });
  const everyBudget = (): string[] => budgets.list().map((budget) => nameOf(budget));
  controller.watch(budgets);
  controller.watch(shared.nodes, {
    add: everyBudget,
    update: (node, old) => (nodeChangeMatters(node, old) ? everyBudget() : []),
    delete: everyBudget,
  });
  controller.start();
  return controller;
}

export function disruptionBudgetControllerFactory(): ControllerFactory {
  return { name: 'disruption-budget', start: startDisruptionBudgetController };
}
