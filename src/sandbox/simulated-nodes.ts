/**
 * Creating kwok's simulated nodes and waiting until they are Ready: the Node objects a sandbox
 * starts with or adds later (`ControlPlane.addNodes`).
 */
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import pLimit from 'p-limit';
import { SANDBOX_NAMES } from '../api/names.js';
import { waitForList } from '../kube/wait.js';
import { nameOf } from '../api/object-meta.js';

export interface SimulatedNode {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  taints?: { key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }[];
}

/** Node creations in flight at once: a thousand at a time would swamp a small machine's API server. */
const NODE_CREATE_CONCURRENCY = 50;
/** Extra time to wait for Ready per node beyond the first `timeoutMs` worth. */
const READY_MS_PER_NODE = 100;

/** A count (named `node-0` …) or explicit nodes. */
export function nodeList(nodes: number | SimulatedNode[] | undefined): SimulatedNode[] {
  if (Array.isArray(nodes)) return nodes;
  return Array.from({ length: nodes ?? 0 }, (_, i) => ({ name: `node-${i}` }));
}

function isReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function simulatedNodeObject(node: SimulatedNode): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: node.name,
      labels: {
        'kubernetes.io/hostname': node.name,
        'kubernetes.io/os': 'linux',
        type: 'kwok',
        [SANDBOX_NAMES.nodeKindLabel]: 'simulated',
        ...node.labels,
      },
      annotations: { [SANDBOX_NAMES.simulatedNodeAnnotation]: 'fake', ...node.annotations },
    },
    spec: { taints: node.taints },
  };
}

/** Creates the nodes (kwok manages them by their annotation) and waits until all are Ready. */
export async function addSimulatedNodes(
  kubeConfig: KubeConfig,
  nodes: SimulatedNode[],
  timeoutMs: number,
): Promise<void> {
  if (nodes.length === 0) return;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const limit = pLimit(NODE_CREATE_CONCURRENCY);
  await Promise.all(nodes.map((node) => limit(() => core.createNode({ body: simulatedNodeObject(node) }))));
  const names = new Set(nodes.map((n) => n.name));
  const what = names.size > 10 ? `${names.size} nodes` : `nodes ${[...names].join(', ')}`;
  await waitForList<V1Node>(
    kubeConfig,
    '/api/v1/nodes',
    (all) => all.filter((n) => names.has(nameOf(n)) && isReady(n)).length === names.size,
    timeoutMs + names.size * READY_MS_PER_NODE,
    `${what} to be Ready`,
  );
}
