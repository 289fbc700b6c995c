/**
 * What the operator's informers keep of each object: the fields some reader of the cache uses, and
 * nothing else. At 1000 nodes the caches hold every Node, the stage Jobs and their pods, and (for
 * the podNonInterruptLabels barrier) every live pod of the cluster; kept whole, most of each is
 * what no controller reads (a pod's container specs and volumes, a Job's pod template, a node's
 * image list, addresses and capacity), and it is most of the operator's heap.
 *
 * Each transform names its readers. A field dropped here reads as absent everywhere downstream, so
 * a new reader of a cached object must add its field here (cached-objects.test.ts pins what is kept).
 * managedFields always goes (no reader, and often the largest part of an object). NodeOps, our own
 * kind, have their transform in cached-nodeops.ts.
 *
 * A finished stage (its NodeOp, Job and pod) stays cached for the SCR's retention of finished ops
 * (an hour): at 1000 nodes x 5 SCRs x 2 stages that is 10000 of each. Their readers read less of
 * a finished object than of a running one (none builds a Job or a pod from it, none follows a
 * container), so each transform keeps less once its object is finished. Each transform reads only
 * the object it is given, so an object that is no longer finished (a NodeOp given another node)
 * is kept whole again from its next event on.
 */
import type {
  V1ContainerState,
  V1ContainerStatus,
  V1Job,
  V1Node,
  V1NodeSystemInfo,
  V1ObjectMeta,
  V1Pod,
} from '@kubernetes/client-node';
import { POD_ANNOTATIONS } from '../api/names.js';
import { isJobFinished } from '../jobs/job-progress.js';

/** The object's metadata without managedFields (everything else in it is small or read). */
export function metadataOf(metadata: V1ObjectMeta | undefined): V1ObjectMeta | undefined {
  if (metadata === undefined) return undefined;
  const { managedFields: _dropped, ...kept } = metadata;
  return kept;
}

/** Only the properties whose value is defined (an absent field stays absent, not `undefined`). */
export function defined<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T;
}

/**
 * `object` as JSON.parse builds it, its undefined properties gone: V8 gives a parsed object exactly
 * the room of its properties, where one built property by property (or by `defined`) keeps spare
 * room, about 30 bytes an object. That is 15 % of a trimmed finished stage pod: built by `defined`,
 * a trimmed pod of a KWOK node (the benchmarks') took more heap than the whole one it came from.
 * Used for the finished objects (many, and rarely changed); dates become the strings a watch
 * event brings.
 */
export function compact<T>(object: T): T {
  return JSON.parse(JSON.stringify(object)) as T;
}

/**
 * Nodes (shared by both controllers). Readers: the planner's node view (name, creationTimestamp,
 * labels, annotations, spec.taints, spec.unschedulable), node-metadata ConfigMaps (labels and
 * annotations), node writes and cleanup (status.conditions: ours, by type, with their
 * lastTransitionTime), Events on the node (name, uid, resourceVersion), cordon ownership
 * (annotations, spec.unschedulable), reboot detection (status.nodeInfo.bootID and the Ready
 * condition), read-your-writes (resourceVersion, deletionTimestamp), health gates (conditions, and
 * capacity and allocatable for CEL expressions). The whole spec is kept (it is small); of the status
 * only conditions, capacity, allocatable and the bootID: images, addresses, volumes, daemonEndpoints
 * and the rest of nodeInfo have no reader.
 */
export function cachedNode(node: V1Node): V1Node {
  const status = node.status;
  const bootID = status?.nodeInfo?.bootID;
  return defined({
    apiVersion: node.apiVersion,
    kind: node.kind,
    metadata: metadataOf(node.metadata),
    spec: node.spec,
    status:
      status === undefined
        ? undefined
        : defined({
            conditions: status.conditions,
            // Small, and what a health gate's CEL expression checks after a reboot (a GPU gone missing).
            capacity: status.capacity,
            allocatable: status.allocatable,
            // The other nodeInfo fields are required by the type, not by any reader.
            nodeInfo: bootID === undefined ? undefined : ({ bootID } as V1NodeSystemInfo),
          }),
  });
}

/**
 * Pods with the NodeOp label (stage Job pods, reboot pods), for the NodeOp controller. Readers: Job
 * progress and reboot steps (the whole status: phase, reason, message, conditions' transition
 * times, container statuses' state and lastState), pod → Job → NodeOp mapping (ownerReferences),
 * the Job's pods (the job-name label), which is newest (creationTimestamp), deletionTimestamp.
 * The pod spec has no reader but the node it is bound to.
 *
 * A finished pod (Succeeded or Failed: a pod never leaves either) keeps only what is read of it
 * (`finishedPod`).
 */
export function cachedNodeOpPod(pod: V1Pod): V1Pod {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return finishedPod(pod);
  return defined({
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: metadataOf(pod.metadata),
    spec: pod.spec === undefined ? undefined : defined({ nodeName: pod.spec.nodeName, containers: [] }),
    status: pod.status,
  });
}

/**
 * What is read of a finished Job pod or reboot pod: its identity, labels and owners (`podMetadata`),
 * its node, and of its status its Job's outcome (job-progress.ts `jobProgress`: phase and
 * deletionTimestamp, and of a failed pod `describeFailedContainer`: each container's name, its
 * state's or lastState's terminated exitCode, reason and message, else the pod's reason and
 * message); the Job's final status and retry backoff (run-plan.ts `finishedAtMs`: the terminated
 * finishedAt, else the conditions' lastTransitionTime, and creationTimestamp); whether a pod event
 * is news (event-filters.ts `podNews`: the same, and a container still waiting on a stuck reason
 * with its message, which a pod failed by its deadline can show); the reboot pod's outcome
 * (interrupt-step.ts: phase and terminated exit codes). Nothing reads a finished pod's IPs, start
 * time, QoS class, annotations or finalizers, its conditions' reasons and probe times, nor of its
 * containers the image, ids, readiness, restart count, mounts, user and resources: most of what a
 * kubelet writes.
 */
function finishedPod(pod: V1Pod): V1Pod {
  const status = pod.status ?? {};
  return compact({
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: podMetadata(pod.metadata),
    spec: pod.spec === undefined ? undefined : { nodeName: pod.spec.nodeName, containers: [] },
    status: {
      phase: status.phase,
      reason: status.reason,
      message: status.message,
      conditions: status.conditions?.map((c) => ({
        type: c.type,
        status: c.status,
        lastTransitionTime: c.lastTransitionTime,
      })),
      initContainerStatuses: status.initContainerStatuses?.map(finishedContainerStatus),
      containerStatuses: status.containerStatuses?.map(finishedContainerStatus),
    },
  });
}

function finishedContainerStatus(status: V1ContainerStatus): V1ContainerStatus {
  // The other fields are required by the type, not read of a finished pod (finishedPod).
  return {
    name: status.name,
    state: containerState(status.state),
    lastState: containerState(status.lastState),
  } as V1ContainerStatus;
}

/** A finished container's state as read: waiting (reason, message), terminated (exit, reason, message, when); none if neither. */
function containerState(state: V1ContainerState | undefined): V1ContainerState | undefined {
  const { waiting, terminated } = state ?? {};
  if (waiting === undefined && terminated === undefined) return undefined;
  return {
    waiting,
    terminated: terminated && {
      exitCode: terminated.exitCode,
      reason: terminated.reason,
      message: terminated.message,
      finishedAt: terminated.finishedAt,
    },
  };
}

/**
 * A pod's or Job's identity, labels and owners (and resourceVersion for the informer, read-your-writes
 * and Events); `annotations` when some reader reads any.
 */
function podMetadata(
  metadata: V1ObjectMeta | undefined,
  annotations?: Record<string, string>,
): V1ObjectMeta | undefined {
  if (metadata === undefined) return undefined;
  return defined({
    name: metadata.name,
    namespace: metadata.namespace,
    uid: metadata.uid,
    resourceVersion: metadata.resourceVersion,
    creationTimestamp: metadata.creationTimestamp,
    deletionTimestamp: metadata.deletionTimestamp,
    labels: metadata.labels,
    annotations,
    ownerReferences: metadata.ownerReferences,
  });
}

/**
 * Every live pod bound to a node, for the Skyhook controller's podNonInterruptLabels barrier: in a
 * real cluster the largest cache by far (all pods of all nodes), so it keeps only what
 * node-pods.ts reads: name, namespace, labels, the opt-in annotation `skyhook.nvidia.com/non-interruptible`
 * (no other annotation: they can be large), the controller owner's kind, deletionTimestamp,
 * spec.nodeName and status.phase (plus resourceVersion for the informer), and the Ready condition
 * for health gates (views/health-gates/gate-checks.ts).
 */
export function cachedBarrierPod(pod: V1Pod): V1Pod {
  const metadata = pod.metadata;
  return defined({
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: podMetadata(metadata, optInAnnotations(metadata?.annotations)),
    spec: pod.spec === undefined ? undefined : defined({ nodeName: pod.spec.nodeName, containers: [] }),
    status:
      pod.status === undefined
        ? undefined
        : defined({
            phase: pod.status.phase,
            // The Ready condition only: health gates wait for pods Ready on a node.
            conditions: pod.status.conditions?.filter((c) => c.type === 'Ready'),
          }),
  });
}

/** Of a pod's annotations only the non-interruptible opt-in, when set. */
function optInAnnotations(annotations: Record<string, string> | undefined): Record<string, string> | undefined {
  const value = annotations?.[POD_ANNOTATIONS.nonInterruptible];
  return value === undefined ? undefined : { [POD_ANNOTATIONS.nonInterruptible]: value };
}

/**
 * Stage Jobs, for the NodeOp controller. Readers: Job progress (name, status: conditions, failed),
 * suspension and retention (spec.suspend, spec.ttlSecondsAfterFinished), Job → NodeOp mapping
 * (ownerReferences), busy nodes (conditions). The pod template, most of a Job, has no reader: the
 * Job is built from its NodeOp, never from the cached Job.
 *
 * A finished Job (Complete or Failed: neither is ever taken back) keeps only what is read of it:
 * its identity, labels and owners (`podMetadata`); of its spec whether we run it (managedBy:
 * run-plan.ts then only deletes its unfinished pods), suspend, its retention (which a failure
 * lengthens: node-end.ts `keepFailedJob`) and activeDeadlineSeconds (event-filters.ts `jobNews`
 * compares them); of its status the conditions' type, status, reason and message (job-progress.ts,
 * `jobNews`) and the failed count (the node's restarts). Its start and completion times, counts and
 * the conditions' times are read only while it runs (run-plan.ts), and the rest of the spec never.
 */
export function cachedJob(job: V1Job): V1Job {
  if (isJobFinished(job)) return finishedJob(job);
  const spec = job.spec;
  let keptSpec: V1Job['spec'];
  if (spec !== undefined) {
    const { template: _template, selector: _selector, ...rest } = spec;
    keptSpec = { ...rest, template: {} };
  }
  return defined({
    apiVersion: job.apiVersion,
    kind: job.kind,
    metadata: metadataOf(job.metadata),
    spec: keptSpec,
    status: job.status,
  });
}

function finishedJob(job: V1Job): V1Job {
  const { spec, status } = job;
  return compact({
    apiVersion: job.apiVersion,
    kind: job.kind,
    metadata: podMetadata(job.metadata),
    spec: spec && {
      managedBy: spec.managedBy,
      suspend: spec.suspend,
      ttlSecondsAfterFinished: spec.ttlSecondsAfterFinished,
      activeDeadlineSeconds: spec.activeDeadlineSeconds,
      template: {},
    },
    status: {
      failed: status?.failed,
      conditions: status?.conditions?.map((c) => ({
        type: c.type,
        status: c.status,
        reason: c.reason,
        message: c.message,
      })),
    },
  });
}
