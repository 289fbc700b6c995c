/**
 * Applies the planner's actions to the cluster: step by step in the planner's order, each step's
 * independent writes concurrently (apply-steps.ts says how the actions are cut so that the
 * crash-safe order of action-order.ts holds; bounded-writes.ts bounds them). The first failure
 * throws once the writes in flight have settled (the reconcile is retried with backoff and replans
 * from the caches, so nothing is half-applied for long); no later step starts. Every write is noted
 * in the WriteExpectations as it succeeds, so the next plan waits for the caches to see it. Writes
 * of one node's state, status and plain annotations that follow each other are sent as one patch.
 */
import type { KubernetesObject, V1Node } from '@kubernetes/client-node';
import { GROUP_VERSION, KINDS, NODE_ANNOTATION_PREFIXES, STAGE_OP_ANNOTATIONS } from '../../../api/names.js';
import { nameOf } from '../../../api/object-meta.js';
import type { Skyhook } from '../../../api/skyhook.js';
import { isAlreadyExists } from '../../../kube/client.js';
import { errorMessage } from '../../../kube/errors.js';
import { createOrReplace, ignoreNotFound } from '../../../kube/writes.js';
import { describeFailedStage, failedStageMessage, STAGE_FAILED_REASON } from './failed-stage-report.js';
import { addTaint, cordonWithClaim, releaseCordonClaim, removeTaint } from './node-cordon-taint-writes.js';
import { ensureNodeMetadata, writeNodeMetadata } from './node-metadata-writes.js';
import { applyNodeWrite, nodeAfterWrite } from './node-writes.js';
import { buildPackageConfigMap } from '../build/package-configmaps.js';
import type { CordonNode, PlannerAction, SetSkyhookStatus } from '../plan/planner-types.js';
import { buildStageNodeOp } from '../build/stage-nodeop.js';
import { skyhookObjects, stageNodeOps, type SkyhookIo, writeLimitOf } from '../context.js';
import { type ApplyStep, type ApplyUnit, applySteps, chains, type DirectAction } from './apply-steps.js';
import { runBounded } from './bounded-writes.js';

/** `steps`: the planner's (`PlanResult.steps`), applied one after the other. */
export async function applyActions(
  io: SkyhookIo,
  skyhook: Skyhook,
  steps: readonly (readonly PlannerAction[])[],
): Promise<void> {
  /** Nodes as this pass's writes returned them (the node-metadata ConfigMap is built from the newest). */
  const writtenNodes = new Map<string, V1Node>();
  const noted = (written: V1Node | undefined): void => {
    if (!written) return;
    io.expectations.wrote('Node', written);
    writtenNodes.set(nameOf(written), written);
  };
  /** Nodes whose cordon the cluster budgets refused in this pass: nothing of theirs may assume it. */
  const refused = new Set<string>();
  const limit = writeLimitOf(io);
  const apply = async (unit: ApplyUnit): Promise<void> => {
    if (unit.kind === 'nodeWrite')
      return noted(
        await applyNodeWrite(io.clients.core, io.caches.nodes.get(unit.write.node), unit.write, new Date(io.now())),
      );
    if (unit.kind === 'nodeMetadata') {
      const cached = io.caches.nodes.get(unit.write.node);
      return cached ? writeNodeMetadata(io, skyhook, nodeAfterWrite(cached, unit.write)) : undefined;
    }
    return applyAction(io, skyhook, unit.action, writtenNodes, noted);
  };
  for (const step of applySteps(steps)) {
    await runBounded(
      limit,
      chains(admitted(io, skyhook, step, refused)).map((chain) => async () => {
        for (const unit of chain) await apply(unit);
      }),
      (errors) =>
        io.logger.warn(
          { skyhook: nameOf(skyhook), errors: errors.map(errorMessage) },
          'more writes of this reconcile failed',
        ),
    );
  }
}

/**
 * The step's chains without what the cluster budgets refuse: each SCR interrupt cordon is asked for
 * in the planner's order before the step's writes start (as the sequential loop asked right before
 * each), and a refused node's cordon, and any later stage op of the node that assumes it, is dropped.
 */
function admitted(io: SkyhookIo, skyhook: Skyhook, step: ApplyStep, refused: Set<string>): ApplyStep {
  const keep = (unit: ApplyUnit): boolean => {
    if (unit.kind !== 'action') return true;
    const { action } = unit;
    if (action.kind === 'cordonNode' && !mayCordon(io, skyhook, action)) {
      refused.add(action.node);
      return false;
    }
    return !(action.kind === 'createStageOp' && action.cordon === true && refused.has(action.node));
  };
  return step.filter(keep);
}

/**
 * An SCR's interrupt cordon that newly disrupts the node asks the cluster budgets' arbiter first (the
 * planner saw the budgets in its snapshot; another controller may have taken the last slot since).
 * A refused node stays as it is; the next pass shows it waiting (ClusterBudget).
 */
function mayCordon(io: SkyhookIo, skyhook: Skyhook, action: CordonNode): boolean {
  if (!action.claim.startsWith(NODE_ANNOTATION_PREFIXES.cordon)) return true;
  const decision = io.arbiter.tryAcquire(action.node, `skyhook/${nameOf(skyhook)}`, action.claim);
  if (decision.granted) return true;
  io.logger.info(
    { node: action.node, budget: decision.budget, reason: decision.reason },
    'not cordoning: the cluster disruption budget has no room',
  );
  return false;
}

async function applyAction(
  io: SkyhookIo,
  skyhook: Skyhook,
  action: DirectAction,
  writtenNodes: ReadonlyMap<string, V1Node>,
  notedNodeWrite: (written: V1Node | undefined) => void,
): Promise<void> {
  const { clients, settings, expectations } = io;
  const namespace = settings.namespace;
  switch (action.kind) {
    case 'upsertPackageConfigMap': {
      const body = buildPackageConfigMap(action, skyhook, namespace);
      const name = body.metadata!.name!;
      const written = await createOrReplace({
        create: () => clients.core.createNamespacedConfigMap({ namespace, body }),
        replace: () => clients.core.replaceNamespacedConfigMap({ name, namespace, body }),
      });
      expectations.wrote('ConfigMap', written);
      return;
    }
    case 'deleteStageOp': {
      io.logger.info({ nodeOp: action.name, reason: action.reason }, 'deleting stage NodeOp');
      await ignoreNotFound(stageNodeOps(io).delete(action.name, { propagationPolicy: 'Background' }));
      expectations.deleted('NodeOp', action.name);
      return;
    }
    case 'suspendStageOp':
      return suspendStageOp(io, action.name, action.suspend);
    case 'createStageOp': {
      // Before the op: its Job mounts the node's metadata ConfigMap and would not start without it.
      await ensureNodeMetadata(io, skyhook, action.node, writtenNodes.get(action.node));
      const body = buildStageNodeOp({ op: action, skyhook, settings });
      try {
        expectations.wrote('NodeOp', await stageNodeOps(io).create(body));
      } catch (e) {
        // Created by an earlier pass whose write the cache had not shown yet: the same op, by name.
        if (!isAlreadyExists(e)) throw e;
      }
      return;
    }
    case 'reportFailedStage':
      return reportFailedStage(io, skyhook, action.name);
    case 'setSkyhookStatus':
      return writeSkyhookStatus(io, skyhook, action);
    case 'cordonNode': {
      io.logger.info({ node: action.node, claim: action.claim, reason: action.reason }, 'cordoning node');
      return notedNodeWrite(await cordonWithClaim(clients.core, action.node, action.claim));
    }
    case 'releaseNodeCordon': {
      io.logger.info(
        { node: action.node, claim: action.claim, reason: action.reason },
        'releasing our cordon of the node',
      );
      return notedNodeWrite(await releaseCordonClaim(clients.core, action.node, action.claim));
    }
    case 'addNodeTaint': {
      io.logger.info({ node: action.node, taint: action.taint }, 'tainting node');
      return notedNodeWrite(await addTaint(clients.core, action.node, action.taint, action.annotations));
    }
    case 'removeNodeTaint': {
      io.logger.info({ node: action.node, taint: action.taint }, 'removing taint from node');
      return notedNodeWrite(await removeTaint(clients.core, action.node, action.taint));
    }
    case 'event': {
      const involved: KubernetesObject | undefined =
        action.involved.kind === 'Skyhook'
          ? io.caches.skyhooks.get(action.involved.name)
          : withKind(io.caches.nodes.get(action.involved.name), 'v1', 'Node');
      if (involved) io.events.record(involved, action.type, action.reason, action.message);
      return;
    }
  }
}

/**
 * The whole status replaced (PUT on the status subresource) with the cached resourceVersion: map
 * entries the planner dropped go away, and a stale cache fails with a conflict instead of
 * overwriting a newer status.
 */
async function writeSkyhookStatus(io: SkyhookIo, skyhook: Skyhook, action: SetSkyhookStatus): Promise<void> {
  const body: Skyhook = {
    ...skyhook,
    apiVersion: GROUP_VERSION,
    kind: KINDS.skyhook.kind,
    status: action.status,
  };
  // The planner plans only this SCR's actions: `action.skyhook` is the body's own name.
  io.expectations.wrote('Skyhook', await skyhookObjects(io).replaceStatus(body));
}

/**
 * Pause: the op is marked; the NodeOp controller, which owns the op's Job, suspends it (or creates
 * it suspended) and lifts the suspension when the mark goes.
 */
async function suspendStageOp(io: SkyhookIo, name: string, suspend: boolean): Promise<void> {
  const patched = await ignoreNotFound(
    stageNodeOps(io).mergePatch(name, {
      metadata: { annotations: { [STAGE_OP_ANNOTATIONS.suspended]: suspend ? 'true' : null } },
    }),
  );
  if (patched) io.expectations.wrote('NodeOp', patched);
}

/** A Warning Event on the SCR naming the failed container, its exit and its log's last lines. */
async function reportFailedStage(io: SkyhookIo, skyhook: Skyhook, opName: string): Promise<void> {
  const nodeOp = io.caches.nodeOps.get(opName, io.settings.namespace);
  if (!nodeOp) return;
  const failed = await describeFailedStage(io.clients.core, nodeOp, io.logger);
  io.events.record(
    { ...skyhook, apiVersion: GROUP_VERSION, kind: KINDS.skyhook.kind },
    'Warning',
    STAGE_FAILED_REASON,
    failedStageMessage(failed),
  );
}

function withKind<T extends KubernetesObject>(object: T | undefined, apiVersion: string, kind: string): T | undefined {
  return object ? { ...object, apiVersion, kind } : undefined;
}
