/**
 * What the NodeOp reconciler's steps share: clients, caches, events, settings, the background
 * drains, and the per-reconcile view of one NodeOp. Also the small cluster actions several steps
 * take (create-if-absent, the reboot pod, events on the NodeOp and its node).
 */
import type { V1Job, V1Node, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { STAGE_OP_ANNOTATIONS } from '../../api/names.js';
import type { NodeOp } from '../../api/nodeop.js';
import { cordonOwner } from '../../jobs/cordon/claims.js';
import { errorMessage, isAlreadyExists, statusCode, type KubeClients } from '../../kube/client.js';
import type { Clock } from '../../kube/clock.js';
import type { EventRecorder, EventType } from '../../kube/events.js';
import type { NamespaceGate } from './namespace-gate.js';
import type { Informer } from '../../kube/informer.js';
import { interruptPlanFor, type InterruptPlan } from '../../templates/interrupt-plan.js';
import { rebootPodName } from '../../templates/object-names.js';
import { buildRebootPod } from '../../templates/reboot-pod.js';
import type { NodeOpSettings } from '../../templates/nodeop-settings.js';
import type { DisruptionArbiter } from '../disruption/arbiter.js';
import type { DrainTasks } from './drain-tasks.js';
import type { NodeOpReads } from './nodeop-reads.js';
import type { StageMetrics } from './stage-metrics.js';
import { ignoreNotFound } from '../../kube/writes.js';

export interface NodeOpCaches {
  jobs: Informer<V1Job>;
  /** Pods carrying the NodeOp label: Job pods and reboot pods. */
  pods: Informer<V1Pod>;
  nodes: Informer<V1Node>;
}

export interface NodeOpContext {
  clients: KubeClients;
  caches: NodeOpCaches;
  /** The cached pods of a Job (an index: cache-indexes.ts PodsByJob). */
  podsOfJob(namespace: string, jobName: string): V1Pod[];
  /** NodeOps from the cache, read-your-writes (nodeop-reads.ts). */
  reads: NodeOpReads;
  events: EventRecorder;
  logger: Logger;
  settings: NodeOpSettings;
  clock: Clock;
  drains: DrainTasks;
  /** Wakes a NodeOp key (a drain finished). */
  enqueue(key: string): void;
  /** The operator's own pod (`namespace/name`), which a drain must not evict; undefined outside a pod. */
  ownPod?: string;
  /** Stage durations of Skyhook NodeOps; absent in tests that do not look at them. */
  stageMetrics?: StageMetrics;
  /** Asked before a cordon newly disrupts a node (the cluster-wide DisruptionBudgets). */
  arbiter: DisruptionArbiter;
  /** Which namespaces' NodeOps run (namespace-gate.ts). */
  namespaces: NamespaceGate;
}

/** One NodeOp as a reconcile sees it. */
export interface NodeOpView {
  nodeOp: NodeOp;
  key: string;
  namespace: string;
  /** The cordon ownership value of this NodeOp. */
  owner: string;
  /** The interrupt after each node's Job, if any. */
  plan: InterruptPlan | undefined;
  /** Held by its owner (a paused Skyhook): nothing disruptive starts and its Jobs are suspended. */
  suspended: boolean;
}

export function viewOf(nodeOp: NodeOp, key: string, settings: NodeOpSettings): NodeOpView {
  const namespace = nodeOp.metadata.namespace ?? '';
  const suspended = nodeOp.metadata.annotations?.[STAGE_OP_ANNOTATIONS.suspended] === 'true';
  return {
    nodeOp,
    key,
    namespace,
    owner: cordonOwner(nodeOp.metadata),
    plan: interruptPlanFor(nodeOp.spec, settings.interruptCommands),
    suspended,
  };
}

/** Creates `object` unless it exists; resolves true when this call created it. */
export async function createIfAbsent(create: () => Promise<unknown>, what: string): Promise<boolean> {
  try {
    await create();
    return true;
  } catch (e) {
    if (isAlreadyExists(e)) return false;
    if (statusCode(e) === 422) throw new RefusedAsInvalidError(what, e);
    throw e;
  }
}

/**
 * The API server refused an object built from the NodeOp's spec as invalid (422): every retry would
 * be refused the same way, so the node fails with the API server's words, which name the field.
 */
export class RefusedAsInvalidError extends Error {
  override readonly name = 'RefusedAsInvalidError';
  constructor(what: string, cause: unknown) {
    super(
      `the API server refused the ${what} built from this NodeOp: ${errorMessage(cause)}; fix that field of the NodeOp (of a Skyhook stage: the package's env, image, agentImageOverride or resources in the Skyhook)`,
    );
  }
}

/** The reboot pod a node's interrupt needs (created before the Job, so a drain finds and skips it). */
export async function ensureRebootPod(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  jobName: string,
): Promise<void> {
  if (!op.plan || ctx.caches.pods.get(rebootPodName(jobName), op.namespace)) return;
  const pod = buildRebootPod({ nodeOp: op.nodeOp, node, jobName, plan: op.plan, settings: ctx.settings });
  await createIfAbsent(async () => {
    ctx.caches.pods.applyOwnWrite(await ctx.clients.core.createNamespacedPod({ namespace: op.namespace, body: pod }));
  }, 'reboot pod');
}

/** The Job from the cache, else from the API server (the cache may not have seen a Job just created). */
export async function findJob(ctx: NodeOpContext, namespace: string, name: string): Promise<V1Job | undefined> {
  const cached = ctx.caches.jobs.get(name, namespace);
  if (cached) return cached;
  return ignoreNotFound(ctx.clients.batch.readNamespacedJob({ name, namespace }));
}

/**
 * Records an event on the NodeOp and, when it still exists, on the node it is about. Routine
 * progress (`routine`: Job created, node completed) is not recorded at all for a NodeOp with
 * `eventVerbosity: Quiet`: its creator records it already (the Skyhook controller: Apply on the SCR
 * when it creates a stage's op, State on the node when it records the outcome), and every Event is
 * an API write. Cordon, drain, reboot and failure events are always recorded on both.
 */
export function notify(
  ctx: NodeOpContext,
  op: NodeOpView,
  node: string,
  type: EventType,
  reason: string,
  message: string,
  routine = false,
): void {
  if (routine && op.nodeOp.spec.eventVerbosity === 'Quiet') return;
  ctx.events.record(op.nodeOp, type, reason, `node ${node}: ${message}`);
  const nodeObject = ctx.caches.nodes.get(node);
  if (nodeObject)
    ctx.events.record({ ...nodeObject, apiVersion: 'v1', kind: 'Node' }, type, reason, `NodeOp ${op.key}: ${message}`);
}
