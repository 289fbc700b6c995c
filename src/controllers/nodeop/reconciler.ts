/**
 * reconcile(NodeOp key): read the NodeOp from the cache, read-your-writes (nodeop-reads.ts: a cache
 * that missed our own last status write could free a concurrency slot twice), advance every started node one step, start the nodes pacing
 * allows, and write the status. Starting a node that cordons or interrupts is first only written
 * down (phase Pending, the slot is taken, the bootID recorded); its side effects happen on the next
 * pass, so a restart between the two never loses a slot or takes one twice. Other nodes get their
 * Job in the same pass (see startsAtOnce).
 */
import { API_GROUP, API_VERSION, KINDS, NODEOP_NAMES } from '../../api/names.js';
import type { NodeOp, NodeOpNodeStatus } from '../../api/nodeop.js';
import { nodeOpClaim } from '../../jobs/cordon/claims.js';
import { releaseCordon } from '../../jobs/cordon/write.js';
import { unmarkRebooting } from '../../jobs/cordon/reboot-mark.js';
import { disruptsNode } from './disruption-step.js';
import { isJobFinished } from '../../jobs/job-progress.js';
import { mergePatchCustomObject, mergePatchCustomObjectStatus, type CustomObjectRef } from '../../kube/client.js';
import { parseKey } from '../../kube/controller.js';
import type { ReconcileResult } from '../../kube/queue.js';
import { nodeJobName } from '../../templates/object-names.js';
import { cachedSpecSuffices } from '../cached-nodeops.js';
import { viewOf, type NodeOpContext, type NodeOpView } from './context.js';
import { advanceNode } from './node-steps.js';
import { startedStatus } from './node-status.js';
import { isInFlight, planStarts, targetNodesOf, type PacingDecision } from './pacing.js';
import { mayStartNodes } from './event-filters.js';
import { Recheck } from './recheck.js';
import { HeldEntries, planStatusWrite } from './status-write.js';
import { stopNodeOpWork } from './teardown.js';
import { nameOf } from '../../api/object-meta.js';
import { NODES_BY_CORDON_OWNER } from './cache-indexes.js';
import { markIgnored } from './ignored-nodeop.js';

/**
 * Whether a node can go from start to Job in one pass. Not with an interrupt (the bootID the reboot
 * is checked against must be on record before anything runs) nor with a cordon (a cordon is only
 * taken under a status that says so), which keep the two-pass start described above.
 */
function startsAtOnce(op: NodeOpView): boolean {
  return op.plan === undefined && op.nodeOp.spec.cordon !== true;
}

/** While nodes are in flight, look again at least this often even if no event comes. */
const SAFETY_RECHECK_MS = 60_000;
/** A deleted NodeOp waits this long at most for its pods to end (a pod's default grace period is 30 s). */
const STOP_TIMEOUT_MS = 60_000;
/** How often it looks while waiting (pod events wake it sooner). */
const STOP_RECHECK_MS = 1_000;

export class NodeOpReconciler {
  private readonly ctx: NodeOpContext;
  /** Node entries not written yet (status-write.ts), read back into the next reconcile. */
  private readonly held = new HeldEntries();

  constructor(ctx: NodeOpContext) {
    this.ctx = ctx;
  }

  readonly reconcile = async (key: string): Promise<ReconcileResult> => {
    const nodeOp = await this.read(key);
    if (!nodeOp) {
      this.held.forget(key);
      this.ctx.drains.abort(`${key}|`);
      return;
    }
    const op = viewOf(nodeOp, key, this.ctx.settings);
    if (nodeOp.metadata.deletionTimestamp) {
      this.held.forget(key);
      return this.cleanUp(op);
    }
    // After the deletion branch: one started before NODEOP_NAMESPACES was narrowed still gets its cleanup.
    if (!this.ctx.namespaces.allows(op.namespace)) {
      await markIgnored(this.ctx, op, this.ref(key));
      return;
    }
    if (disruptsNode(op) && !nodeOp.metadata.finalizers?.includes(NODEOP_NAMES.finalizer)) {
      // Added before the first cordon (or reboot mark), so a deleted NodeOp always gets the chance to lift it.
      await this.setFinalizers(op, [...(nodeOp.metadata.finalizers ?? []), NODEOP_NAMES.finalizer]);
    }

    const now = this.ctx.clock.now();
    const before = this.held.withHeld(key, nodeOp);
    const statuses: Record<string, NodeOpNodeStatus> = { ...before };
    const targets = targetNodesOf(nodeOp.spec, this.ctx.caches.nodes);
    const recheck = new Recheck();
    // In target order, so nodes started together get their Jobs control-plane first too.
    const targetSet = new Set(targets);
    const started = [
      ...targets.filter((n) => before[n]),
      ...Object.keys(before)
        .filter((n) => !targetSet.has(n))
        .sort(),
    ];
    for (const node of started) {
      const step = await advanceNode(this.ctx, op, node, before[node]!);
      statuses[node] = step.status;
      recheck.at(step.recheckAt, step.recheckReason);
    }

    const pacing = planStarts({
      targets,
      statuses,
      busyNodes: this.busyNodes(op, [...targets, ...Object.keys(statuses)]),
      concurrency: nodeOp.spec.concurrency ?? 0,
      stopOnFailure: nodeOp.spec.stopOnFailure ?? false,
    });
    let deferred = false;
    for (const node of pacing.start) {
      const started = startedStatus(
        op,
        nodeJobName(nameOf(nodeOp), nodeOp.metadata.uid ?? '', node),
        this.ctx.caches.nodes.get(node),
        now,
      );
      statuses[node] = started;
      if (startsAtOnce(op)) {
        // Nothing to record before the Job: its deterministic name finds it again after a restart
        // (and pacing counts it as busy meanwhile), so the Pending write is skipped.
        const step = await advanceNode(this.ctx, op, node, started);
        statuses[node] = step.status;
        recheck.at(step.recheckAt, step.recheckReason);
      } else {
        deferred = true;
      }
    }

    const writeAt = await this.writeStatus(op, targets, pacing, statuses);
    this.ctx.stageMetrics?.observe(nodeOp, before, statuses, this.ctx.clock.now());
    recheck.at(writeAt, "a node's held Running entry is due to be written");

    if (deferred) return { requeueAfterMs: 0, reason: 'started nodes whose side effects come next pass' };
    // Events wake a NodeOp whenever something it reads changes; this only covers a lost one.
    // Nodes started in this pass count: the echo of this pass's own status write no longer wakes it.
    // A finished node whose Job has not said Complete yet only holds a slot: it matters (and its
    // Job's finish is news, controller.ts) only while the NodeOp may start another node.
    const running = pacing.start.length > 0 || Object.values(statuses).some(isInFlight);
    if (running || (pacing.inFlight > 0 && mayStartNodes(nodeOp, statuses)))
      recheck.at(now + SAFETY_RECHECK_MS, 'safety net while nodes are in flight');
    return recheck.result(now);
  };

  /**
   * The NodeOp, read-your-writes (nodeop-reads.ts); whole from the API server in the rare case that
   * its cached copy, a finished one's, lacks what this reconcile would read (cached-nodeops.ts).
   */
  private async read(key: string): Promise<NodeOp | undefined> {
    const nodeOp = await this.ctx.reads.read(key);
    if (!nodeOp || cachedSpecSuffices(nodeOp, this.held.withHeld(key, nodeOp))) return nodeOp;
    return this.ctx.reads.readWhole(key);
  }

  private ref(key: string): CustomObjectRef {
    const { name, namespace } = parseKey(key);
    return {
      group: API_GROUP,
      version: API_VERSION,
      plural: KINDS.nodeOp.plural,
      name,
      ...(namespace ? { namespace } : {}),
    };
  }

  /** Nodes whose Job of this NodeOp exists and is unfinished, as the cache sees them. */
  private busyNodes(op: NodeOpView, nodes: string[]): Set<string> {
    const { name = '', uid = '' } = op.nodeOp.metadata;
    return new Set(
      nodes.filter((node) => {
        const job = this.ctx.caches.jobs.get(nodeJobName(name, uid, node), op.namespace);
        return job !== undefined && !isJobFinished(job);
      }),
    );
  }

  /**
   * Writes what changed (status-write.ts decides what and when), remembers the entries held back, and
   * returns when the first of those is due to be written.
   */
  private async writeStatus(
    op: NodeOpView,
    targets: string[],
    pacing: PacingDecision,
    statuses: Record<string, NodeOpNodeStatus>,
  ): Promise<number | undefined> {
    const now = this.ctx.clock.now();
    const write = planStatusWrite({ nodeOp: op.nodeOp, targets, pacing, statuses, now });
    if (write.patch) {
      const patch = write.patch;
      await this.ctx.reads.sendStatus(op.key, () =>
        mergePatchCustomObjectStatus<NodeOp>(this.ctx.clients.custom, this.ref(op.key), patch),
      );
      if (op.nodeOp.status?.phase !== patch.phase)
        this.ctx.logger.info({ nodeOp: op.key, phase: patch.phase }, 'NodeOp phase changed');
    }
    this.held.remember(op.key, op.nodeOp, write.held);
    return write.writeAt;
  }

  private async setFinalizers(op: NodeOpView, finalizers: string[]): Promise<void> {
    const metadata = { resourceVersion: op.nodeOp.metadata.resourceVersion, finalizers };
    this.ctx.reads.wrote(op.key, await mergePatchCustomObject(this.ctx.clients.custom, this.ref(op.key), { metadata }));
  }

  /**
   * Deleted NodeOp: while it holds our finalizer, its Jobs and pods are stopped first (teardown.ts),
   * up to STOP_TIMEOUT_MS after the deletion (a node that is gone never reports its pods ended);
   * then what we cordoned is uncordoned and the finalizer goes.
   */
  private async cleanUp(op: NodeOpView): Promise<ReconcileResult> {
    this.ctx.drains.abort(`${op.key}|`);
    const holding = op.nodeOp.metadata.finalizers?.includes(NODEOP_NAMES.finalizer) === true;
    const running = holding ? await stopNodeOpWork(this.ctx, op) : 0;
    const deletedAt = new Date(op.nodeOp.metadata.deletionTimestamp ?? NaN).getTime();
    if (running > 0 && !(this.ctx.clock.now() - deletedAt >= STOP_TIMEOUT_MS))
      return { requeueAfterMs: STOP_RECHECK_MS, reason: 'waiting for the pods of a deleted NodeOp to end' };
    const ours = this.ctx.caches.nodes.byIndex(NODES_BY_CORDON_OWNER, op.owner);
    for (const node of ours) await releaseCordon(this.ctx.clients.core, nameOf(node), nodeOpClaim(op.owner));
    // Rare (a deleted NodeOp that reboots uncordoned nodes): a scan, not an index.
    for (const node of this.ctx.caches.nodes.list())
      if (node.metadata?.annotations?.[NODEOP_NAMES.rebootingBy] === op.owner)
        await unmarkRebooting(this.ctx.clients.core, nameOf(node), op.owner);
    const finalizers = op.nodeOp.metadata.finalizers ?? [];
    if (finalizers.includes(NODEOP_NAMES.finalizer))
      await this.setFinalizers(
        op,
        finalizers.filter((f) => f !== NODEOP_NAMES.finalizer),
      );
  }
}
