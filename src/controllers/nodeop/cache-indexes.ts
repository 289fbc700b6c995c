/**
 * Indexes over the NodeOp controller's caches, kept up to date by informer events, so the hot
 * paths look up instead of scanning: a node event finds the NodeOps about that node
 * (`NodeOpsByNode`), and a running node's step finds its Job's pods (`PodsByJob`). At 1000 nodes the
 * scans were most of the controller's CPU: every node event read every NodeOp, every step of a
 * running node every NodeOp pod of the namespace. Both give exactly what the scans gave
 * (cache-indexes.test.ts compares them on random caches). A deleted NodeOp's teardown finds its
 * Jobs, its pods and the nodes it cordoned through the informers' own indexes below (teardown.ts):
 * it scanned every Job, pod and node once per deleted NodeOp, and the end of a 5000-node rollout's
 * retention deletes 10000 of them.
 */
import type { V1Job, V1Node, V1Pod } from '@kubernetes/client-node';
import { KUBERNETES_NAMES, NODEOP_NAMES } from '../../api/names.js';
import { cordonedBy } from '../../jobs/cordon/claims.js';
import type { NodeOp, NodeOpSpec } from '../../api/nodeop.js';
import { selectorMatches } from '../../api/label-selector.js';
import { nameOf } from '../../api/object-meta.js';
import { objectKey, type Informer } from '../../kube/informer.js';

/** Adds `value` to the set at `key` of `map`. */
function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key);
  if (set) set.add(value);
  else map.set(key, new Set([value]));
}

function removeFrom(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}

/**
 * NodeOps that target a node or have started on it: by name for those with `targetNodes` (every
 * stage NodeOp) and for every node in a NodeOp's status; NodeOps that select by `nodeSelector` are
 * few and matched against the node's labels.
 */
export class NodeOpsByNode {
  private readonly byNode = new Map<string, Set<string>>();
  /** The node names each NodeOp is filed under (to unfile them on update or delete). */
  private readonly filed = new Map<string, string[]>();
  private readonly bySelector = new Map<string, NodeOpSpec['nodeSelector']>();

  /** Files `op` as it is now (replacing what was filed for it). */
  upsert(op: NodeOp): void {
    const key = objectKey(op);
    this.remove(op);
    const names = new Set([...(op.spec.targetNodes ?? []), ...Object.keys(op.status?.nodeStatuses ?? {})]);
    for (const name of names) addTo(this.byNode, name, key);
    this.filed.set(key, [...names]);
    if (!op.spec.targetNodes) this.bySelector.set(key, op.spec.nodeSelector);
  }

  remove(op: NodeOp): void {
    const key = objectKey(op);
    for (const name of this.filed.get(key) ?? []) removeFrom(this.byNode, name, key);
    this.filed.delete(key);
    this.bySelector.delete(key);
  }

  /**
   * Keys of the NodeOps that target `node` or have started on it; with `selectingOnly`, only those
   * that select by nodeSelector (a change of labels matters to them only).
   */
  of(node: V1Node, selectingOnly = false): string[] {
    const filed = [...(this.byNode.get(nameOf(node)) ?? [])];
    const keys = new Set(selectingOnly ? filed.filter((key) => this.bySelector.has(key)) : filed);
    const labels = node.metadata?.labels ?? {};
    for (const [key, selector] of this.bySelector) if (selectorMatches(selector, labels)) keys.add(key);
    return [...keys];
  }

  /** Keeps the index in step with `nodeOps` (replaying what it holds already). */
  follow(nodeOps: Pick<Informer<NodeOp>, 'on'>): this {
    nodeOps.on({ add: (op) => this.upsert(op), update: (op) => this.upsert(op), delete: (op) => this.remove(op) });
    return this;
  }
}

/** The pods of each Job, by the `job-name` label the Job controller puts on its pods. */
export class PodsByJob {
  private readonly byJob = new Map<string, Set<string>>();
  private readonly filed = new Map<string, string>();
  private readonly pods: Pick<Informer<V1Pod>, 'on' | 'get'>;

  constructor(pods: Pick<Informer<V1Pod>, 'on' | 'get'>) {
    this.pods = pods;
    pods.on({ add: (pod) => this.upsert(pod), update: (pod) => this.upsert(pod), delete: (pod) => this.remove(pod) });
  }

  /** The cached pods of Job `jobName` in `namespace`. */
  of(namespace: string, jobName: string): V1Pod[] {
    const keys = this.byJob.get(`${namespace}/${jobName}`);
    if (!keys) return [];
    const found: V1Pod[] = [];
    for (const key of keys) {
      const slash = key.indexOf('/');
      const pod = this.pods.get(key.slice(slash + 1), key.slice(0, slash));
      if (pod) found.push(pod);
    }
    return found;
  }

  /** A pod keeps its place while its Job stays the same, so `of` lists pods in the cache's order. */
  private upsert(pod: V1Pod): void {
    const job = pod.metadata?.labels?.[KUBERNETES_NAMES.jobNameLabel];
    const key = objectKey(pod);
    const jobKey = job === undefined ? undefined : `${pod.metadata?.namespace ?? ''}/${job}`;
    if (this.filed.get(key) === jobKey) return;
    this.remove(pod);
    if (jobKey === undefined) return;
    addTo(this.byJob, jobKey, key);
    this.filed.set(key, jobKey);
  }

  private remove(pod: V1Pod): void {
    const key = objectKey(pod);
    const jobKey = this.filed.get(key);
    if (jobKey === undefined) return;
    removeFrom(this.byJob, jobKey, key);
    this.filed.delete(key);
  }
}

/** Jobs by the uid of each owner (a stage Job's owner is its NodeOp). */
export const JOBS_BY_OWNER_UID = 'nodeop/job-owner-uid';
/** Pods by `<namespace>/<NodeOp name>` of their NodeOp label (reboot pods are owned by the NodeOp itself). */
export const PODS_BY_NODEOP = 'nodeop/pod-nodeop';
/** Nodes by the NodeOp cordon owner (`cordonOwner`) that cordoned them. */
export const NODES_BY_CORDON_OWNER = 'nodeop/node-cordon-owner';

export function jobOwnerUids(job: V1Job): string[] {
  return (job.metadata?.ownerReferences ?? []).map((ref) => ref.uid);
}

export function podNodeOp(pod: V1Pod): string[] {
  const nodeOp = pod.metadata?.labels?.[NODEOP_NAMES.nodeOpLabel];
  return nodeOp === undefined ? [] : [`${pod.metadata?.namespace ?? ''}/${nodeOp}`];
}

export function nodeCordonOwner(node: V1Node): string[] {
  const owner = cordonedBy(node);
  return owner === undefined ? [] : [owner];
}

/** Adds the informer indexes above (idempotent: the informers are shared). */
export function addNodeOpIndexes(caches: {
  jobs: Pick<Informer<V1Job>, 'addIndex'>;
  pods: Pick<Informer<V1Pod>, 'addIndex'>;
  nodes: Pick<Informer<V1Node>, 'addIndex'>;
}): void {
  caches.jobs.addIndex(JOBS_BY_OWNER_UID, jobOwnerUids);
  caches.pods.addIndex(PODS_BY_NODEOP, podNodeOp);
  caches.nodes.addIndex(NODES_BY_CORDON_OWNER, nodeCordonOwner);
}
