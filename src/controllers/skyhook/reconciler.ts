/**
 * reconcile(SCR name): level-triggered, from the informer caches only. Waits until the caches show
 * this process's own last writes, keeps the finalizer, asks the pure planner for this SCR's next
 * actions (the SCRs before it by priority are planned too, since they hold it back per node), and
 * applies them in order (a status change that is only rollout progress may wait a moment to be
 * written with the next ones). Deletion clears what the SCR left on nodes, deletes its NodeOps and
 * ConfigMaps, then releases the finalizer.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { API_GROUP, KINDS, nodeAnnotations, SKYHOOK_ANNOTATIONS, SKYHOOK_FINALIZER } from '../../api/names.js';
import { nameOf } from '../../api/object-meta.js';
import type { Skyhook } from '../../api/skyhook.js';
import { errorDetails, isConflict, isNotFound } from '../../kube/client.js';
import { ignoreNotFound } from '../../kube/writes.js';
import type { ReconcileResult } from '../../kube/queue.js';
import { deleteStaleNodeMetadata } from './write/node-metadata-writes.js';
import { clearSkyhookFromNode, hasSkyhookTraces } from './write/node-writes.js';
import { StageOpSummaryMemo } from './views/op-summary.js';
import { configMapsOf, packageConfigMapData, staleConfigMaps } from './build/package-configmaps.js';
import { anyPodBarrier, podViewsByNode } from './views/node-pods.js';
import { NodeViewMemo } from './views/node-view.js';
import { emptyPlanCache, type PlanCache } from './plan/plan-cache.js';
import { planNextActions, type PlanRunInput } from './plan/planner.js';
import type { NodeView, SetSkyhookStatus } from './plan/planner-types.js';
import { applyActions } from './write/apply-actions.js';
import { expectationCaches } from './write/expectation-caches.js';
import { evaluateHealthGates, gateRecheckMs } from './views/health-gates/evaluate.js';
import { earliest } from './plan/pass-advance.js';
import { PrometheusGate } from './views/health-gates/prometheus-gate.js';
import { skyhookObjects, stageNodeOps, type SkyhookIo, writeLimitOf } from './context.js';
import { runBounded } from './write/bounded-writes.js';
import { podWaitStarts, waitReasons } from './views/wait-marks.js';
import { CONFIGMAPS_BY_SKYHOOK, NODES_BY_MARK, NODEOPS_BY_SKYHOOK, PODS_BY_NODE } from './views/cache-indexes.js';
import type { SkyhookMetrics } from './skyhook-metrics.js';
import { pacedStatusWrite, StatusWritePacing } from './status-write-pacing.js';
import { packageTrustInput } from './trust-input.js';

// A safety net only: the event bringing the caches up to date enqueues the SCR (node events wake those
// `behind`) within milliseconds; the queue keeps this timer after it (at 2 s, one more reconcile each).
const CACHE_CATCH_UP_RECHECK_MS = 15_000;

export class SkyhookReconciler {
  /** Progress-only status changes are batched (status-write-pacing.ts). */
  private readonly statusPacing = new StatusWritePacing();
  /** Incremental planning (plan/plan-cache.ts): the planner's per-node results and the views they key on. */
  private planCache: PlanCache = emptyPlanCache();
  private readonly nodeViewMemo = new NodeViewMemo();
  private readonly opSummaries = new StageOpSummaryMemo();
  private readonly behind = new Set<string>(); // SCRs whose last reconcile found the caches behind their writes
  /** Health gates' Prometheus answers, shared by every reconcile (briefly cached). */
  private readonly prometheus = new PrometheusGate();
  private readonly io: SkyhookIo;
  private readonly metrics: SkyhookMetrics;

  constructor(io: SkyhookIo, metrics: SkyhookMetrics) {
    this.io = io;
    this.metrics = metrics;
    this.opSummaries.follow(io.caches.nodeOps);
  }

  /**
   * A Skyhook deleted under a reconcile (its last write answered NotFound) is a finished reconcile,
   * not a failure; one changed since it was cached (a Conflict) is looked at again once the cache
   * has the change, whose event enqueues it anyway. Neither is logged as an error nor backs off.
   */
  readonly reconcile = async (key: string): Promise<ReconcileResult> => {
    try {
      return await this.reconcileOnce(key);
    } catch (e) {
      const details = errorDetails(e);
      if (details.group !== API_GROUP || details.kind !== KINDS.skyhook.plural || details.name !== key) throw e;
      if (isNotFound(e)) {
        this.io.logger.debug({ skyhook: key }, 'Skyhook deleted during its reconcile; nothing left to do');
        this.forget(key);
        return;
      }
      if (isConflict(e)) {
        this.io.logger.debug(
          { skyhook: key },
          'Skyhook changed since it was cached; looking again once the cache has the change',
        );
        return this.metrics.requeues.requeue('conflict', CACHE_CATCH_UP_RECHECK_MS);
      }
      throw e;
    }
  };

  /** SCRs waiting for the caches to show their own writes (skyhook-controller.ts wakes them on node events). */
  waitingForCaches = (): ReadonlySet<string> => this.behind;
  /**
   * A wake the SCR would only wait through (its caches are behind): it is offered again with every
   * node event until the caches have caught up (skyhook-controller.ts), as if its reconcile had run and waited.
   */
  deferWake = (key: string): void => {
    this.behind.add(key);
  };
  /** Whether the caches still miss some of the SCR's own writes (its reconcile would only wait). */
  cachesBehind = (key: string): boolean => this.io.expectations.scoped(key).behind(...expectationCaches(this.io));

  private forget(key: string): void {
    this.behind.delete(key);
    this.metrics.forget(key);
    this.statusPacing.forget(key);
    this.io.trust?.forget(key);
  }

  private async reconcileOnce(key: string): Promise<ReconcileResult> {
    // This SCR's writes are noted as its own, and it waits for those only (write-expectations.ts).
    const io: SkyhookIo = { ...this.io, expectations: this.io.expectations.scoped(key) };
    const behind = io.expectations.unmet(...expectationCaches(io));
    if (behind.length > 0) {
      this.behind.add(key);
      io.logger.debug({ skyhook: key, behind }, 'caches have not seen our last writes yet; waiting for their events');
      return this.metrics.requeues.requeue('caches_behind', CACHE_CATCH_UP_RECHECK_MS);
    }
    this.behind.delete(key);
    const skyhook = io.caches.skyhooks.get(key);
    if (!skyhook) {
      this.forget(key);
      return;
    }
    if (skyhook.metadata.deletionTimestamp) return this.finalize(io, skyhook);
    const finalized = (skyhook.metadata.finalizers ?? []).includes(SKYHOOK_FINALIZER);
    const stamped = skyhook.metadata.annotations?.[SKYHOOK_ANNOTATIONS.version] === io.settings.operatorVersion;
    if (!finalized || !stamped) {
      // The finalizer first, so a deletion from here on always gets the cleanup, and the operator's
      // version, as upstream stamps it, in the same metadata patch; the update event replans.
      await this.patchMetadata(io, skyhook, {
        ...(finalized ? {} : { finalizers: [...(skyhook.metadata.finalizers ?? []), SKYHOOK_FINALIZER] }),
        ...(stamped ? {} : { annotations: { [SKYHOOK_ANNOTATIONS.version]: io.settings.operatorVersion } }),
      });
      // Its series exist from the first reconcile, 0 where nothing is counted yet.
      this.metrics.report(skyhook, skyhook.status ?? {});
      return;
    }

    const { phases } = this.metrics;
    let trustRetryMs: number | undefined;
    const plan = await phases.time('plan', async () => {
      const { input, retryAfterMs } = await this.plannerInput(key);
      trustRetryMs = retryAfterMs;
      return planNextActions(input);
    });
    if (plan.cache) this.planCache = plan.cache;
    const statusAction = plan.actions.find((action): action is SetSkyhookStatus => action.kind === 'setSkyhookStatus');
    const now = io.now();
    const gated = io.caches.nodes.byIndex(NODES_BY_MARK, nodeAnnotations.healthGate(key));
    const planned = earliest(earliest(plan.requeueAfterMs, gateRecheckMs(gated, key)), trustRetryMs);
    const statusWrite = pacedStatusWrite(this.statusPacing, key, skyhook.status, statusAction?.status, now, planned);
    // A paced status write waits: its step is left out (the next pass plans it again).
    const steps =
      statusAction && !statusWrite.write
        ? plan.steps.map((step) => step.filter((action) => action !== statusAction)).filter((step) => step.length > 0)
        : plan.steps;
    // Built only when asked for: a 1000-node pass has thousands of actions.
    if (io.logger.isLevelEnabled('debug'))
      io.logger.debug(
        {
          skyhook: key,
          actions: steps.flat().map((a) => ('node' in a ? `${a.kind}:${a.node}` : a.kind)),
          requeueAfterMs: plan.requeueAfterMs,
        },
        'planned',
      );
    await phases.time('apply', () => applyActions(io, skyhook, steps));
    if (statusWrite.write) this.statusPacing.written(key, now);
    await phases.time('cleanup', async () => {
      await this.deleteStaleConfigMaps(io, skyhook);
      await deleteStaleNodeMetadata(io, skyhook);
    });
    const policy = skyhook.spec.deploymentPolicy
      ? io.caches.deploymentPolicies.get(skyhook.spec.deploymentPolicy)
      : undefined;
    this.metrics.report(
      skyhook,
      statusAction?.status ?? skyhook.status ?? {},
      policy,
      waitReasons(io.caches.nodes, key),
      now,
      plan.nodeState,
    );
    this.metrics.podWaits.report(key, podWaitStarts(io.caches.nodes, key), now);
    const again = statusWrite.requeueAfterMs;
    if (again === undefined) return undefined;
    return this.metrics.requeues.requeue(again === planned ? 'planned' : 'status_pacing', again);
  }

  private async plannerInput(only: string): Promise<{ input: PlanRunInput; retryAfterMs?: number }> {
    const { caches, settings } = this.io;
    const namespace = settings.namespace;
    const skyhooks = caches.skyhooks.list().filter((scr) => !scr.metadata.deletionTimestamp);
    const configMaps = caches.configMaps.list(namespace);
    const deploymentPolicies = caches.deploymentPolicies.list();
    const healthGates = await evaluateHealthGates({
      skyhooks,
      policies: deploymentPolicies,
      nodes: caches.nodes.list(),
      podsOn: (node) => caches.pods.byIndex(PODS_BY_NODE, node),
      prometheus: this.prometheus,
      scope: 'active',
    });
    const trust = await packageTrustInput(this.io, skyhooks);
    const input: PlanRunInput = {
      now: this.io.now(),
      skyhooks: skyhooks.map((scr) => ({
        skyhook: scr,
        packageConfigMaps: packageConfigMapData(configMapsOf(configMaps, nameOf(scr))),
      })),
      nodes: this.nodeViews(skyhooks),
      stageOps: this.opSummaries.current(() => caches.nodeOps.list(namespace), skyhooks, namespace),
      settings: {
        operatorVersion: settings.operatorVersion,
        defaultStageTimeoutSeconds: settings.defaultStageTimeoutSeconds,
        runtimeRequiredTaint: settings.runtimeRequiredTaint,
        finishedOpRetentionMs: settings.finishedOpRetentionMs,
      },
      deploymentPolicies,
      ...(healthGates ? { healthGates } : {}),
      disruptionBudgets: caches.disruptionBudgets?.list() ?? [],
      ...(trust.packageTrust ? { packageTrust: trust.packageTrust } : {}),
      only,
      // Incremental planning: a stale cache (another key's reconcile wrote one meanwhile) is only less useful.
      cache: this.planCache,
    };
    return trust.retryAfterMs === undefined ? { input } : { input, retryAfterMs: trust.retryAfterMs };
  }

  /**
   * Nodes with their pods when some SCR has a podNonInterruptLabels barrier (nobody else reads them);
   * without one, only the nodes with opted-in pods get theirs (a node without `pods` has none).
   */
  private nodeViews(skyhooks: Skyhook[]): NodeView[] {
    const { caches } = this.io;
    const nodes = caches.nodes.list();
    const barrier = anyPodBarrier(skyhooks);
    return this.nodeViewMemo.viewsWithPods(nodes, (name) => {
      const on = podViewsByNode(caches.pods.byIndex(PODS_BY_NODE, name), !barrier).get(name);
      return barrier || on !== undefined ? (on ?? []) : undefined;
    });
  }

  private async deleteStaleConfigMaps(io: SkyhookIo, skyhook: Skyhook): Promise<void> {
    const stale = staleConfigMaps(this.configMapsOf(nameOf(skyhook)), skyhook);
    await runBounded(
      writeLimitOf(io),
      stale.map((cm) => () => this.deleteConfigMap(io, nameOf(cm))),
    );
  }

  /** The SCR's package ConfigMaps (an index: not a scan of every ConfigMap). */
  private configMapsOf(name: string): V1ConfigMap[] {
    const namespace = this.io.settings.namespace;
    const owned = this.io.caches.configMaps.byIndex(CONFIGMAPS_BY_SKYHOOK, name);
    return configMapsOf(
      owned.filter((cm) => cm.metadata?.namespace === namespace),
      name,
    );
  }

  private async deleteConfigMap(io: SkyhookIo, name: string): Promise<void> {
    await ignoreNotFound(io.clients.core.deleteNamespacedConfigMap({ name, namespace: io.settings.namespace }));
    io.expectations.deleted('ConfigMap', name);
  }

  /** Deleted SCR: nodes cleared of its state, its NodeOps and ConfigMaps deleted, then the finalizer released. */
  private async finalize(io: SkyhookIo, skyhook: Skyhook): Promise<ReconcileResult> {
    const name = nameOf(skyhook);
    const finalizers = skyhook.metadata.finalizers ?? [];
    if (!finalizers.includes(SKYHOOK_FINALIZER)) return;
    this.metrics.forget(name);
    const namespace = io.settings.namespace;
    const limit = writeLimitOf(io);
    const ops = io.caches.nodeOps
      .byIndex(NODEOPS_BY_SKYHOOK, name)
      .filter((op) => op.metadata.namespace === namespace && !op.metadata.deletionTimestamp);
    await runBounded(
      limit,
      ops.map((op) => async () => {
        await ignoreNotFound(stageNodeOps(io).delete(nameOf(op), { propagationPolicy: 'Background' }));
        io.expectations.deleted('NodeOp', nameOf(op));
      }),
    );
    await runBounded(
      limit,
      this.configMapsOf(name).map((cm) => () => this.deleteConfigMap(io, nameOf(cm))),
    );
    await runBounded(
      limit,
      io.caches.nodes
        .list()
        .filter((node) => hasSkyhookTraces(node, name))
        .map((node) => async () => {
          const written = await clearSkyhookFromNode(io.clients.core, node, name);
          if (written) io.expectations.wrote('Node', written);
        }),
    );
    await this.patchMetadata(io, skyhook, { finalizers: finalizers.filter((f) => f !== SKYHOOK_FINALIZER) });
    io.logger.info({ skyhook: name }, 'Skyhook deleted: node state cleared, NodeOps and ConfigMaps deleted');
  }

  /** A merge patch of the SCR's metadata only (never its spec: the generation stays). */
  private async patchMetadata(
    io: SkyhookIo,
    skyhook: Skyhook,
    change: { finalizers?: string[]; annotations?: Record<string, string> },
  ): Promise<void> {
    const metadata = { resourceVersion: skyhook.metadata.resourceVersion, ...change };
    const name = nameOf(skyhook);
    const written = await skyhookObjects(io).mergePatch(name, { metadata });
    // The last finalizer off a deleting SCR deletes it: the cache will lose it, not catch up with this version.
    if (skyhook.metadata.deletionTimestamp && change.finalizers?.length === 0) io.expectations.deleted('Skyhook', name);
    else io.expectations.wrote('Skyhook', written);
  }
}
