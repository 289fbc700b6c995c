/**
 * The Skyhook controller's wiring: informers over SCRs, nodes, the stage NodeOps, and package and
 * node-metadata ConfigMaps in the operator namespace (NodeOps and nodes are shared with the NodeOp
 * controller's caches), events mapped to SCR keys (every informer through controller.watch), and
 * the factory the operator's registry starts.
 * Event-driven: a NodeOp's status change wakes its SCR, a node change the SCRs it can move
 * (views/node-wakes.ts: one SCR's own keys wake it, and the SCRs after it when its completion on the
 * node changes; anything else every SCR), a
 * DeploymentPolicy change the SCRs naming it, and a pod change only the SCRs whose
 * podNonInterruptLabels barrier it can move.
 */
import { type CacheCatchUp, wakeCaughtUp } from './wake-caught-up.js';
import type { V1ConfigMap, V1Node, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { DeploymentPolicy } from '../../api/deployment-policy.js';
import type { DisruptionBudget } from '../../api/disruption-budget.js';
import { API_GROUP, API_VERSION, CHILD_ANNOTATIONS, CHILD_LABELS, KINDS } from '../../api/names.js';
import type { NodeOp } from '../../api/nodeop.js';
import { nameOf } from '../../api/object-meta.js';
import type { Skyhook } from '../../api/skyhook.js';
import { Controller } from '../../kube/controller.js';
import type { Informer } from '../../kube/informer.js';
import { customResourcePath } from '../../kube/list-watch.js';
import type { ControllerFactory, InformerFactory, OperatorRuntime, Stoppable } from '../../kube/runtime.js';
import { sameJson } from '../../util/json-equal.js';
import { cachedBarrierPod, cachedNode } from '../cached-objects.js';
import { cachedNodeOp } from '../cached-nodeops.js';
import type { DisruptionArbiter } from '../disruption/arbiter.js';
import { sharedDisruption } from '../disruption/shared-arbiter.js';
import { compactNodeMetadata } from './build/node-metadata.js';
import { NODE_METADATA_KIND } from './write/node-metadata-writes.js';
import { opChangeMatters } from './views/op-summary.js';
import { LIVE_BOUND_PODS_FIELD_SELECTOR, podChangeMatters, skyhooksHeldByPod } from './views/node-pods.js';
import { SkyhookReconciler } from './reconciler.js';
import { EVERY_SKYHOOK, nodeUpdateWakes } from './views/node-wakes.js';
import { addSkyhookIndexes } from './views/cache-indexes.js';
import type { SkyhookCaches } from './context.js';
import { SkyhookMetrics } from './skyhook-metrics.js';
import { readSkyhookSettings, type SkyhookSettings } from './skyhook-settings.js';
import { writeLimit } from './write/bounded-writes.js';
import { WriteExpectations } from './write/write-expectations.js';
import { writeThrough } from './write/expectation-caches.js';
import type { PackageTrustPolicy } from '../../api/package-trust-policy.js';
import type { VerifyImageSignature } from '../../signing/verdict.js';
import { verifyImageSignature } from '../../signing/verify.js';
import { trustChecker, trustPolicyInformer } from '../trust/trust-wiring.js';
import type { RegistrySettings } from '../trust/registry-access.js';

export interface SkyhookControllerOptions {
  /** Overrides of the settings read from the environment. */
  settings?: Partial<SkyhookSettings>;
  workers?: number;
  syncTimeoutMs?: number;
  /** The cluster-wide budgets' arbiter; default: the process's shared one (shared-arbiter.ts). */
  arbiter?: DisruptionArbiter;
  /** The image-signature verifier the PackageTrustPolicies use; default: src/signing/verify.ts's (cosign). */
  verify?: VerifyImageSignature;
  /** How the verifier reaches registries; default: REGISTRY_MIRRORS and REGISTRY_CA_FILE. */
  registry?: RegistrySettings;
}

/**
 * What the planner reads from a node: a status-only update (heartbeats, our conditions) changes nothing.
 * sameJson ignores key order, which JSON.stringify did not; both versions come from the API server,
 * which writes map keys sorted, so the two agree here.
 */
function nodeChangeMatters(node: V1Node, old: V1Node): boolean {
  return (
    !sameJson(node.metadata?.labels, old.metadata?.labels) ||
    !sameJson(node.metadata?.annotations, old.metadata?.annotations) ||
    !sameJson(node.spec?.taints, old.spec?.taints) ||
    (node.spec?.unschedulable === true) !== (old.spec?.unschedulable === true)
  );
}

/** Spec or annotation edits (priority, pause, disable) change what later SCRs wait for; a status write does not. */
function skyhookChangeMatters(scr: Skyhook, old: Skyhook): boolean {
  return (
    scr.metadata.generation !== old.metadata.generation ||
    !sameJson(scr.metadata.annotations, old.metadata.annotations) ||
    scr.metadata.deletionTimestamp !== old.metadata.deletionTimestamp
  );
}

function skyhookCaches(
  informers: InformerFactory,
  namespace: string,
  disruptionBudgets: Informer<DisruptionBudget> | undefined,
  trustPolicies: Informer<PackageTrustPolicy> | undefined,
): SkyhookCaches {
  return {
    skyhooks: informers.informer<Skyhook>(customResourcePath(API_GROUP, API_VERSION, KINDS.skyhook.plural)),
    nodes: informers.informer<V1Node>('/api/v1/nodes', { transform: cachedNode }),
    nodeOps: informers.informer<NodeOp>(customResourcePath(API_GROUP, API_VERSION, KINDS.nodeOp.plural), {
      transform: cachedNodeOp,
    }),
    configMaps: informers.informer<V1ConfigMap>(`/api/v1/namespaces/${namespace}/configmaps`, {
      labelSelector: CHILD_LABELS.name,
    }),
    // Up to SCRs × nodes of them: the cache keeps metadata and a hash of the data, not the data.
    nodeMetadata: informers.informer<V1ConfigMap>(`/api/v1/namespaces/${namespace}/configmaps`, {
      labelSelector: CHILD_LABELS.nodeMeta,
      transform: compactNodeMetadata,
    }),
    pods: informers.informer<V1Pod>('/api/v1/pods', {
      fieldSelector: LIVE_BOUND_PODS_FIELD_SELECTOR,
      transform: cachedBarrierPod,
    }),
    deploymentPolicies: informers.informer<DeploymentPolicy>(
      customResourcePath(API_GROUP, API_VERSION, KINDS.deploymentPolicy.plural),
    ),
    ...(disruptionBudgets ? { disruptionBudgets } : {}),
    ...(trustPolicies ? { trustPolicies } : {}),
  };
}

/** Every informer's events mapped to the SCR keys they can move (see the module comment). */
function watchSkyhookEvents(
  controller: Controller,
  caches: SkyhookCaches,
  expectations: WriteExpectations,
  namespace: string,
  caught: CacheCatchUp,
  log: Logger,
): void {
  const trace = (fields: object, msg: string): void => log.debug(fields, msg);
  const everySkyhook = (): string[] => caches.skyhooks.list().map((scr) => nameOf(scr));
  controller.watch(caches.skyhooks, {
    add: everySkyhook,
    update: (scr, old) => (skyhookChangeMatters(scr, old) ? everySkyhook() : [nameOf(scr)]),
    delete: everySkyhook,
  });
  const opOwner = (op: NodeOp): string[] =>
    op.metadata.namespace === namespace && op.spec.skyhookStage ? [op.spec.skyhookStage.skyhook] : [];
  // An update wakes the op's SCR when it changes what the planner reads of it (its summary: phase,
  // restarts, outcome, deletion…) or is our own write a reconcile waits to see; the NodeOp controller's
  // finalizer and bookkeeping writes change nothing the plan reads.
  const opUpdate = (op: NodeOp, old: NodeOp): string[] => {
    const owner = opOwner(op);
    if (owner.length === 0 || op === old || expectations.awaits('NodeOp', nameOf(op))) return owner;
    return opChangeMatters(op, old, caches.skyhooks.get(owner[0]!)) ? owner : [];
  };
  controller.watch(caches.nodeOps, { add: opOwner, update: opUpdate, delete: opOwner });
  controller.watch(caches.configMaps, (cm) => {
    const owner = cm.metadata?.annotations?.[CHILD_ANNOTATIONS.name];
    return owner ? [owner] : [];
  });
  // Node-metadata ConfigMaps wake their SCR only when a reconcile waits to see our own write of one.
  // Anything else changes nothing the planner reads, and one deleted by someone else needs no wake:
  // it is written again right before the node's next stage, the only time a Job needs it.
  const nodeMetadataWake = (cm: V1ConfigMap): string[] => {
    const owner = cm.metadata?.annotations?.[CHILD_ANNOTATIONS.name];
    return owner && expectations.awaits(NODE_METADATA_KIND, nameOf(cm)) ? [owner] : [];
  };
  controller.watch(caches.nodeMetadata, {
    add: nodeMetadataWake,
    update: (cm, old) => (cm !== old ? nodeMetadataWake(cm) : []),
    delete: nodeMetadataWake,
  });
  // A policy change moves only the SCRs that name it (a missing one blocks them until it appears).
  controller.watch(caches.deploymentPolicies, (policy) =>
    caches.skyhooks
      .list()
      .filter((scr) => scr.spec.deploymentPolicy === policy.metadata.name)
      .map((scr) => nameOf(scr)),
  );
  // A budget's change can free or hold a node for any SCR.
  if (caches.disruptionBudgets)
    controller.watch(caches.disruptionBudgets, {
      add: everySkyhook,
      update: (budget, old) => (budget.metadata.generation !== old.metadata.generation ? everySkyhook() : []),
      delete: everySkyhook,
    });
  // A trust policy's change can block, unblock or re-pin any SCR's packages.
  if (caches.trustPolicies)
    controller.watch(caches.trustPolicies, {
      add: everySkyhook,
      update: (policy, old) => (policy.metadata.generation !== old.metadata.generation ? everySkyhook() : []),
      delete: everySkyhook,
    });
  const podWakes = (versions: V1Pod[]): string[] =>
    skyhooksHeldByPod(versions, caches.skyhooks.list(), (name) => caches.nodes.get(name));
  controller.watch(caches.pods, {
    add: (pod) => podWakes([pod]),
    update: (pod, old) => (pod !== old && podChangeMatters(pod, old) ? podWakes([pod, old]) : []),
    delete: (pod) => podWakes([pod]),
  });
  // A node change wakes the SCRs it can move (views/node-wakes.ts) and those waiting to see their own
  // writes; a status-only update only when it is the one a reconcile waits to see (our condition write).
  const nodeUpdate = (node: V1Node, old: V1Node): string[] => {
    if (node === old) return everySkyhook();
    if (!nodeChangeMatters(node, old)) return expectations.awaits('Node', nameOf(node)) ? everySkyhook() : [];
    if ((caches.disruptionBudgets?.list().length ?? 0) > 0) return everySkyhook();
    const wakes = nodeUpdateWakes(node, old, caches.skyhooks.list());
    if (wakes === EVERY_SKYHOOK) return everySkyhook();
    // Caches still behind an SCR's own writes: its wake waits for them, deferred, never dropped.
    const woken = wakeCaughtUp(wakes, caught);
    const deferred = wakes.filter((scr) => !woken.includes(scr));
    if (deferred.length > 0) trace({ node: nameOf(node), deferred, woken }, 'node update: wakes deferred');
    return woken;
  };
  controller.watch(caches.nodes, { add: everySkyhook, update: nodeUpdate, delete: everySkyhook });
}

export async function startSkyhookController(
  runtime: OperatorRuntime,
  options: SkyhookControllerOptions = {},
): Promise<Stoppable> {
  const { informers, clients, events, logger } = runtime;
  const settings: SkyhookSettings = { ...readSkyhookSettings(process.env, runtime.namespace), ...options.settings };
  const syncTimeoutMs = options.syncTimeoutMs ?? 120_000;
  const disruption = await sharedDisruption(runtime, syncTimeoutMs);
  const trustPolicies = await trustPolicyInformer(runtime, syncTimeoutMs);
  const caches = skyhookCaches(informers, settings.namespace, disruption.budgets, trustPolicies);
  addSkyhookIndexes(caches);
  await Promise.all(Object.values(caches).map((informer) => informer?.waitForSync(syncTimeoutMs)));

  const log = logger.child({ controller: 'skyhook' });
  // Only a broken watch lets an expectation reach its safety net: say so loudly (write-expectations.ts).
  const expectations = new WriteExpectations(Date.now, '', undefined, {
    onExpired: ({ owner, kind, name, ageMs }) => {
      log.warn(
        { skyhook: owner, kind, name, ageS: Math.round(ageMs / 1000) },
        'cache never showed our write; read-your-writes gave up waiting (is a watch broken?)',
      );
      runtime.metrics.writeExpectationExpired(kind);
    },
    onWrote: writeThrough({ caches, settings }),
  });
  const reconciler = new SkyhookReconciler(
    {
      clients,
      caches,
      settings,
      events,
      expectations,
      arbiter: options.arbiter ?? disruption.arbiter,
      logger: log,
      now: Date.now,
      writeLimit: writeLimit(settings.writeConcurrency),
      ...(trustPolicies
        ? {
            trust: trustChecker(runtime, {
              namespace: settings.namespace,
              operatorPullSecret: settings.imagePullSecret,
              verify: options.verify ?? verifyImageSignature,
              ...(options.registry ? { registry: options.registry } : {}),
            }),
          }
        : {}),
    },
    new SkyhookMetrics(runtime.metrics.registry),
  );
  const controller = new Controller({
    name: 'skyhook',
    reconcile: reconciler.reconcile,
    workers: options.workers ?? 4,
    logger,
    metrics: runtime.metrics,
  });
  watchSkyhookEvents(controller, caches, expectations, settings.namespace, reconciler, log);
  controller.start();
  return controller;
}

export function skyhookControllerFactory(options: SkyhookControllerOptions = {}): ControllerFactory {
  return { name: 'skyhook', start: (runtime) => startSkyhookController(runtime, options) };
}
