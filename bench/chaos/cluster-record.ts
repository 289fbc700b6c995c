/**
 * What the chaos suite judges a run by, recorded by watches for the whole run, independently of the
 * operator: every change of each node's cordon, taints, nodeState annotation, status label and
 * bootID (and its deletion), and every stage NodeOp and Job that started (recordStageJobs). The
 * number of nodes disrupted at once is counted as each change arrives, so a short overlap between
 * two changes is not missed.
 */
import type { KubernetesObject, V1Node } from '@kubernetes/client-node';
import {
  CHILD_LABELS,
  KINDS,
  NODE_ANNOTATION_PREFIXES,
  nodeAnnotations,
  nodeLabels,
  GROUP_VERSION,
  NODEOP_NAMES,
} from '../../src/api/names.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { NAMESPACE, recordStageJobs, type ClusterHandle, type JobRecorder } from '../../test/e2e/skyhook-cluster.js';

export interface NodeSnapshot {
  /** Date.now() when the watch saw this state. */
  at: number;
  node: string;
  deleted: boolean;
  unschedulable: boolean;
  /** `key:effect` of every taint. */
  taints: string[];
  nodeState: string | undefined;
  status: string | undefined;
  bootId: string | undefined;
  /** The operator's cordon bookkeeping on the node (cordon claims, cordoned-by, drain start). */
  cordonMarks: string[];
}

export interface StageStart {
  kind: 'NodeOp' | 'Job';
  uid: string;
  node: string;
  package: string;
  stage: string;
  at: number;
}

export interface ClusterRecord {
  /** Every change of a recorded node field, in the order seen. */
  history: NodeSnapshot[];
  jobs: JobRecorder;
  nodeOps: StageStart[];
  /** Stage NodeOps and Jobs of `skyhook`, in the order they appeared. */
  stageStarts(): StageStart[];
  /** The latest state of each node (deleted ones included). */
  latest(): Map<string, NodeSnapshot>;
  /** Most nodes disrupted (cordoned, or in progress or erroring for `skyhook`) at the same time. */
  maxDisrupted(): number;
  /** The nodes disrupted when that most was first reached, each with how (`cordoned`, its status). */
  mostDisrupted(): { at: number; nodes: string[] };
  stop(): Promise<void>;
}

const OPERATOR_MARKS = [NODE_ANNOTATION_PREFIXES.cordon, NODE_ANNOTATION_PREFIXES.drainStart, NODEOP_NAMES.cordonedBy];

export function snapshotOf(node: V1Node, skyhook: string, deleted = false): NodeSnapshot {
  const annotations = node.metadata?.annotations ?? {};
  return {
    at: Date.now(),
    node: node.metadata?.name ?? '',
    deleted,
    unschedulable: node.spec?.unschedulable === true,
    taints: (node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort(),
    nodeState: annotations[nodeAnnotations.nodeState(skyhook)],
    status: node.metadata?.labels?.[nodeLabels.status(skyhook)],
    bootId: node.status?.nodeInfo?.bootID,
    cordonMarks: Object.keys(annotations)
      .filter((key) => OPERATOR_MARKS.some((mark) => key.startsWith(mark)))
      .sort(),
  };
}

/** Disrupted: cordoned, or taken by the rollout (in progress, or erroring, as upstream counts it). */
export const isDisrupted = (s: NodeSnapshot): boolean =>
  !s.deleted && (s.unschedulable || s.status === 'in_progress' || s.status === 'erroring');

const sameState = (a: NodeSnapshot, b: NodeSnapshot): boolean =>
  JSON.stringify({ ...a, at: 0 }) === JSON.stringify({ ...b, at: 0 });

export async function recordCluster(h: ClusterHandle, skyhook: string): Promise<ClusterRecord> {
  const kc = h.cp.kubeConfig;
  const nodes = new Informer<V1Node>(apiListWatch(kc, '/api/v1/nodes'), {
    resource: 'chaos-nodes',
    logger: silentLogger(),
  });
  const ops = new Informer<KubernetesObject>(
    apiListWatch(kc, `/apis/${GROUP_VERSION}/namespaces/${NAMESPACE}/${KINDS.nodeOp.plural}`),
    { resource: 'chaos-nodeops', logger: silentLogger() },
  );
  const history: NodeSnapshot[] = [];
  const latest = new Map<string, NodeSnapshot>();
  const disrupted = new Set<string>();
  let max = 0;
  let most = { at: 0, nodes: [] as string[] };
  const how = (s: NodeSnapshot): string =>
    `${s.node}(${[s.unschedulable ? 'cordoned' : '', s.status ?? ''].filter(Boolean).join(',')})`;
  const seen = (node: V1Node, deleted = false): void => {
    const snapshot = snapshotOf(node, skyhook, deleted);
    const previous = latest.get(snapshot.node);
    if (previous && sameState(previous, snapshot)) return;
    history.push(snapshot);
    latest.set(snapshot.node, snapshot);
    if (isDisrupted(snapshot)) disrupted.add(snapshot.node);
    else disrupted.delete(snapshot.node);
    if (disrupted.size > max) most = { at: snapshot.at, nodes: [...disrupted].map((n) => how(latest.get(n)!)) };
    max = Math.max(max, disrupted.size);
  };
  const nodeOps: StageStart[] = [];
  const opUids = new Set<string>();
  const opSeen = (op: KubernetesObject): void => {
    const labels = op.metadata?.labels ?? {};
    const uid = op.metadata?.uid ?? '';
    if (opUids.has(uid) || labels[CHILD_LABELS.name] !== skyhook) return;
    opUids.add(uid);
    nodeOps.push({
      kind: 'NodeOp',
      uid,
      node: labels[CHILD_LABELS.node] ?? '',
      package: labels[CHILD_LABELS.package] ?? '',
      stage: labels[CHILD_LABELS.stage] ?? '',
      at: Date.now(),
    });
  };
  nodes.on({ add: (n) => seen(n), update: (n) => seen(n), delete: (n) => seen(n, true) });
  ops.on({ add: opSeen, update: opSeen });
  nodes.start();
  ops.start();
  await Promise.all([nodes.waitForSync(30_000), ops.waitForSync(30_000)]);
  const jobs = await recordStageJobs(h);
  return {
    history,
    jobs,
    nodeOps,
    stageStarts: () =>
      [
        ...nodeOps,
        ...[...jobs.jobs.values()]
          .filter((j) => j.skyhook === skyhook)
          .map(
            (j): StageStart => ({
              kind: 'Job',
              uid: j.uid,
              node: j.node,
              package: j.package,
              stage: j.stage,
              at: j.seenAt,
            }),
          ),
      ].sort((a, b) => a.at - b.at),
    latest: () => latest,
    maxDisrupted: () => max,
    mostDisrupted: () => most,
    stop: async () => {
      await Promise.all([nodes.stop(), ops.stop(), jobs.stop()]);
    },
  };
}
