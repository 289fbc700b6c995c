/**
 * What the operator's informers keep of each object: the fields some reader of the cache uses, and
 * nothing else. At 1000 nodes the caches hold every Node, the stage Jobs and their pods, and (for
 * the podNonInterruptLabels barrier) every live pod of the cluster; kept whole, most of each is
 * what no controller reads (a pod's container specs and volumes, a Job's pod template, a node's
 * image list, addresses and capacity), and it is most of the operator's heap.
 *
 * Each transform names its readers. A field dropped here reads as absent everywhere downstream, so
 * a new reader of a cached object must add its field here (cached-objects.test.ts pins what is kept).
 * managedFields always goes (no reader, and often the largest part of an object).
 */
import type { V1Job, V1Node, V1NodeSystemInfo, V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import { POD_ANNOTATIONS } from '../api/names.js';
import type { NodeOp } from '../api/nodeop.js';
import { upgradeLegacyStageFields } from '../templates/legacy-stage-fields.js';

/** The object's metadata without managedFields (everything else in it is small or read). */
function metadataOf(metadata: V1ObjectMeta | undefined): V1ObjectMeta | undefined {
  if (metadata === undefined) return undefined;
  const { managedFields: _dropped, ...kept } = metadata;
  return kept;
}

/** Only the properties whose value is defined (an absent field stays absent, not `undefined`). */
function defined<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T;
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
 */
export function cachedNodeOpPod(pod: V1Pod): V1Pod {
  return defined({
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: metadataOf(pod.metadata),
    spec: pod.spec === undefined ? undefined : defined({ nodeName: pod.spec.nodeName, containers: [] }),
    status: pod.status,
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
    metadata:
      metadata === undefined
        ? undefined
        : defined({
            name: metadata.name,
            namespace: metadata.namespace,
            uid: metadata.uid,
            resourceVersion: metadata.resourceVersion,
            creationTimestamp: metadata.creationTimestamp,
            deletionTimestamp: metadata.deletionTimestamp,
            labels: metadata.labels,
            annotations: optInAnnotations(metadata.annotations),
            ownerReferences: metadata.ownerReferences,
          }),
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
 */
export function cachedJob(job: V1Job): V1Job {
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

/**
 * NodeOps (shared by both controllers): kept whole but for managedFields, and read as the current
 * API reads them (a NodeOp a 0.1.0 operator created gets its generic fields: legacy-stage-fields.ts).
 */
export function cachedNodeOp(op: NodeOp): NodeOp {
  const metadata = metadataOf(op.metadata) ?? {};
  return upgradeLegacyStageFields({ ...op, metadata });
}
