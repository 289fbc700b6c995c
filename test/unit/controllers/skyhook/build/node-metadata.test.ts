/**
 * The per-node metadata ConfigMaps (upstream reference/skyhook.md §3.8): the name, the exact bytes
 * of the three files (Go encoding/json's, every node key upstream also writes, ours-only keys left out), the ConfigMap's
 * labels, annotations and owner, the cache's compact form and its data comparison, stale selection,
 * and the stage NodeOp naming it for its Job.
 */
import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject, V1ConfigMap, V1Node } from '@kubernetes/client-node';
import {
  CHILD_ANNOTATIONS,
  CHILD_LABELS,
  nodeAnnotations,
  nodeLabels,
  NODEOP_NAMES,
} from '../../../../../src/api/names.js';
import type { Skyhook } from '../../../../../src/api/skyhook.js';
import {
  agentVersion,
  buildNodeMetadataConfigMap,
  compactNodeMetadata,
  isOursOnlyKey,
  NODE_METADATA_HASH_ANNOTATION,
  nodeMetadataConfigMapName,
  nodeMetadataData,
  sameData,
  staleNodeMetadataConfigMaps,
} from '../../../../../src/controllers/skyhook/build/node-metadata.js';
import { readSkyhookSettings } from '../../../../../src/controllers/skyhook/skyhook-settings.js';
import { buildStageNodeOp, NODE_METADATA_MOUNT } from '../../../../../src/controllers/skyhook/build/stage-nodeop.js';
import type { CreateStageOp } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { InformerFactory } from '../../../../../src/kube/runtime.js';
import type { ListWatch } from '../../../../../src/kube/informer.js';
import { silentLogger } from '../../../../../src/kube/logger.js';

const AGENT = 'ghcr.io/nvidia/skyhook/agent:6.2.0';

const skyhook: Skyhook = {
  apiVersion: 'skyhook.nvidia.com/v1alpha1',
  kind: 'Skyhook',
  metadata: { name: 'demo', uid: 'uid-1', generation: 3 },
  spec: {
    nodeSelectors: { matchLabels: { role: 'gpu' } },
    packages: {
      // Deliberately out of order: the map is written sorted by key, the fields in struct order.
      tuning: {
        version: '1.2.3',
        image: 'ghcr.io/x/tuning',
        configMap: { 'a.conf': 'x', 'z.conf': 'y' },
        configInterrupts: {
          'z.conf': { type: 'reboot' },
          'a.conf': { type: 'service', services: ['containerd', 'kubelet'] },
        },
        env: [{ name: 'E', value: '1' }],
      },
      dexter: {
        version: '2.0.0',
        image: 'ghcr.io/x/dexter',
        agentImageOverride: 'ghcr.io/x/agent:9.9.9',
        interrupt: { type: 'service', services: ['cron'] },
        dependsOn: { tuning: '1.2.3' },
      },
      plain: { version: '0.1.0', image: 'ghcr.io/x/plain', interrupt: { type: 'noop', services: [] } },
    },
  },
};

const node: V1Node = {
  metadata: {
    name: 'worker.example.com',
    labels: {
      role: 'gpu',
      'kubernetes.io/hostname': 'worker',
      [nodeLabels.status('demo')]: 'in_progress',
      'nodewright.nvidia.com/status_demo': 'complete',
    },
    annotations: {
      'zone/info': 'a<b>&c',
      [nodeAnnotations.nodeState('demo')]: '{"tuning|1.2.3":{}}',
      [nodeAnnotations.status('other')]: 'complete',
      [nodeAnnotations.version('demo')]: 'v0.1.0',
      [nodeAnnotations.cordon('demo')]: 'true',
      [nodeAnnotations.drainStart('demo')]: '2024-01-01T00:00:00Z',
      [nodeAnnotations.drainBlocked('demo')]: 'ns/pod',
      [nodeAnnotations.waiting('demo')]: 'Budget: 1 of 1',
      [nodeAnnotations.recordedOps('demo')]: 'uid-1,uid-2',
      [NODEOP_NAMES.cordonedBy]: 'skyhook/op@uid',
      'nodewright.nvidia.com/nodeState_demo': '{}',
      [nodeAnnotations.autoTaint('skyhook.nvidia.com')]: 'true',
      'skyhook.nvidia.com/runtimeRequiredCordon': 'true',
      'example.com/status_x': 'kept: not our group',
    },
  },
};

describe('node metadata ConfigMap name', () => {
  it("is upstream's safeName(253, skyhook, node, 'metadata')", () => {
    // the first 8 hex of sha256("demo-worker-example-com-metadata")
    expect(nodeMetadataConfigMapName('demo', 'worker.example.com')).toBe('demo-worker-example-com-metadata-07080e04');
    const long = nodeMetadataConfigMapName('s'.repeat(200), 'n'.repeat(200));
    expect(long).toHaveLength(253);
    expect(long).toMatch(/^s{200}-n{43}-[0-9a-f]{8}$/);
  });
});

describe('node metadata data', () => {
  const data = nodeMetadataData(skyhook, node, AGENT);

  it('has exactly the three files', () => {
    expect(Object.keys(data).sort()).toEqual(['annotations.json', 'labels.json', 'packages.json']);
  });

  it('writes packages.json byte for byte as Go would: sorted keys, struct order, omitempty', () => {
    expect(data['packages.json']).toBe(
      '{"agentVersion":"6.2.0","packages":{' +
        '"dexter":{"name":"dexter","version":"2.0.0","image":"ghcr.io/x/dexter","agentImageOverride":"ghcr.io/x/agent:9.9.9","interrupt":{"type":"service","services":["cron"]}},' +
        '"plain":{"name":"plain","version":"0.1.0","image":"ghcr.io/x/plain","interrupt":{"type":"noop"}},' +
        '"tuning":{"name":"tuning","version":"1.2.3","image":"ghcr.io/x/tuning","configInterrupts":{"a.conf":{"type":"service","services":["containerd","kubelet"]},"z.conf":{"type":"reboot"}}}' +
        '}}',
    );
    expect(nodeMetadataData({ ...skyhook, spec: {} }, node, AGENT)['packages.json']).toBe(
      '{"agentVersion":"6.2.0","packages":{}}',
    );
  });

  it("keeps every label and annotation upstream would have, the operator's own per-SCR ones included, sorted and HTML-escaped as Go does", () => {
    expect(data['labels.json']).toBe(
      '{"kubernetes.io/hostname":"worker","nodewright.nvidia.com/status_demo":"complete","role":"gpu","skyhook.nvidia.com/status_demo":"in_progress"}',
    );
    expect(data['annotations.json']).toBe(
      '{"example.com/status_x":"kept: not our group","nodewright.nvidia.com/nodeState_demo":"{}",' +
        '"skyhook.nvidia.com/autoTaint_skyhook.nvidia.com":"true","skyhook.nvidia.com/cordon_demo":"true",' +
        '"skyhook.nvidia.com/drainBlocked_demo":"ns/pod","skyhook.nvidia.com/drainStart_demo":"2024-01-01T00:00:00Z",' +
        '"skyhook.nvidia.com/nodeState_demo":"{\\"tuning|1.2.3\\":{}}",' +
        '"skyhook.nvidia.com/runtimeRequiredCordon":"true","skyhook.nvidia.com/status_other":"complete",' +
        '"skyhook.nvidia.com/version_demo":"v0.1.0","zone/info":"a\\u003cb\\u003e\\u0026c"}',
    );
    const parsed = JSON.parse(data['annotations.json']!) as Record<string, string>;
    expect(parsed['zone/info']).toBe('a<b>&c');
    expect(parsed[nodeAnnotations.nodeState('demo')]).toBe('{"tuning|1.2.3":{}}');
  });

  it('writes null for a node without labels or annotations, as json.Marshal of a nil map', () => {
    const bare = nodeMetadataData(skyhook, { metadata: { name: 'bare' } }, AGENT);
    expect(bare['labels.json']).toBe('null');
    expect(bare['annotations.json']).toBe('null');
  });

  it('leaves out exactly the keys only this operator writes: waiting_, recordedOps_ and the NodeOp cordon owner', () => {
    for (const key of [
      nodeAnnotations.waiting('x'),
      nodeAnnotations.recordedOps('x'),
      nodeAnnotations.nodeStateCopy('x'),
      NODEOP_NAMES.cordonedBy,
    ])
      expect(isOursOnlyKey(key)).toBe(true);
    const upstreamToo = [
      nodeAnnotations.nodeState('x'),
      nodeAnnotations.status('x'),
      nodeAnnotations.version('x'),
      nodeAnnotations.cordon('x'),
      nodeAnnotations.drainStart('x'),
      nodeAnnotations.drainBlocked('x'),
      nodeAnnotations.autoTaint('x'),
      'skyhook.nvidia.com/runtimeRequiredCordon',
      'skyhook.nvidia.com/ignore',
      'nodewright.nvidia.com/waiting_x',
      'other.io/recordedOps_x',
      'status_x',
    ];
    for (const key of upstreamToo) expect(isOursOnlyKey(key)).toBe(false);
  });

  it('takes agentVersion from the tag of the agent image', () => {
    expect(agentVersion('ghcr.io/nvidia/skyhook/agent:6.2.0')).toBe('6.2.0');
    expect(agentVersion('registry:5000/agent:v1')).toBe('v1');
    expect(agentVersion('registry:5000/agent')).toBe('latest');
    expect(agentVersion('agent:v2@sha256:abc')).toBe('v2');
    expect(agentVersion('agent')).toBe('latest');
  });
});

describe('node metadata ConfigMap', () => {
  const cm = buildNodeMetadataConfigMap(skyhook, node, 'skyhook', AGENT);

  it('carries upstream labels, annotations and SCR owner, and our data hash', () => {
    expect(cm.metadata).toEqual({
      name: 'demo-worker-example-com-metadata-07080e04',
      namespace: 'skyhook',
      labels: { 'skyhook.nvidia.com/skyhook-node-meta': 'demo' },
      annotations: {
        'skyhook.nvidia.com/name': 'demo',
        'skyhook.nvidia.com/Node.name': 'worker.example.com',
        [NODE_METADATA_HASH_ANNOTATION]: expect.stringMatching(/^[0-9a-f]{16}$/),
      },
      ownerReferences: [
        {
          apiVersion: 'skyhook.nvidia.com/v1alpha1',
          kind: 'Skyhook',
          name: 'demo',
          uid: 'uid-1',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(cm.data).toEqual(nodeMetadataData(skyhook, node, AGENT));
  });

  it('is cached as metadata and the hash of the data actually served', () => {
    const served: V1ConfigMap = {
      ...cm,
      metadata: { ...cm.metadata, resourceVersion: '7', managedFields: [{ manager: 'x' }] },
    };
    const compact = compactNodeMetadata(served);
    expect(compact.data).toBeUndefined();
    expect(compact.metadata?.managedFields).toBeUndefined();
    expect(compact.metadata?.resourceVersion).toBe('7');
    expect(compact.metadata?.annotations?.[NODE_METADATA_HASH_ANNOTATION]).toBe(
      cm.metadata?.annotations?.[NODE_METADATA_HASH_ANNOTATION],
    );
    expect(sameData(compact, cm.data!)).toBe(true);
    expect(sameData(served, cm.data!)).toBe(true);

    // A new label on the node, a package change, or someone else's edit of the data: a difference.
    const relabelled = { ...node, metadata: { ...node.metadata, labels: { ...node.metadata?.labels, extra: 'yes' } } };
    expect(sameData(compact, nodeMetadataData(skyhook, relabelled, AGENT))).toBe(false);
    expect(sameData(compact, nodeMetadataData(skyhook, node, 'agent:7.0.0'))).toBe(false);
    const edited = compactNodeMetadata({ ...served, data: { ...cm.data, 'labels.json': '{}' } });
    expect(sameData(edited, cm.data!)).toBe(false);
    // The node state is part of the data (a package reads it there); an ours-only key is not.
    const progressed = {
      ...node,
      metadata: {
        ...node.metadata,
        annotations: {
          ...node.metadata?.annotations,
          [nodeAnnotations.nodeState('demo')]: '{"tuning|1.2.3":{"state":"complete"}}',
        },
      },
    };
    expect(sameData(compact, nodeMetadataData(skyhook, progressed, AGENT))).toBe(false);
    const marked = {
      ...node,
      metadata: {
        ...node.metadata,
        annotations: { ...node.metadata?.annotations, [nodeAnnotations.recordedOps('demo')]: 'uid-3' },
      },
    };
    expect(sameData(compact, nodeMetadataData(skyhook, marked, AGENT))).toBe(true);
  });

  it('is cached compactly by a shared informer, which refuses to be shared with another transform', async () => {
    const source: ListWatch<KubernetesObject> = {
      list: async () => ({ items: [structuredClone(cm)], metadata: { resourceVersion: '1' } }),
      watch: async () => ({ abort: () => undefined }),
    };
    const factory = new InformerFactory(<T extends KubernetesObject>() => source as unknown as ListWatch<T>, {
      logger: silentLogger(),
    });
    const path = '/api/v1/namespaces/skyhook/configmaps';
    const informer = factory.informer<V1ConfigMap>(path, {
      labelSelector: CHILD_LABELS.nodeMeta,
      transform: compactNodeMetadata,
    });
    await informer.waitForSync(5_000);
    const cached = informer.get(cm.metadata!.name!, 'skyhook');
    expect(cached?.data).toBeUndefined();
    expect(sameData(cached!, cm.data!)).toBe(true);
    expect(
      factory.informer<V1ConfigMap>(path, { labelSelector: CHILD_LABELS.nodeMeta, transform: compactNodeMetadata }),
    ).toBe(informer);
    expect(() => factory.informer<V1ConfigMap>(path, { labelSelector: CHILD_LABELS.nodeMeta })).toThrow(
      /another transform/,
    );
    await factory.stopAll();
  });
});

describe('stale node metadata ConfigMaps', () => {
  const of = (scr: string, nodeName: string, deleting = false): V1ConfigMap => ({
    metadata: {
      name: nodeMetadataConfigMapName(scr, nodeName),
      annotations: { [CHILD_ANNOTATIONS.name]: scr, [CHILD_ANNOTATIONS.nodeName]: nodeName },
      ...(deleting ? { deletionTimestamp: new Date() } : {}),
    },
  });

  it("are this SCR's ones whose node is no longer targeted (or gone), not other SCRs' nor ones already going", () => {
    const all = [of('demo', 'n1'), of('demo', 'n2'), of('demo', 'gone'), of('other', 'n3'), of('demo', 'n4', true)];
    const stale = staleNodeMetadataConfigMaps(all, skyhook, new Set(['n1', 'n2', 'n3']));
    expect(stale.map((cm) => cm.metadata?.annotations?.[CHILD_ANNOTATIONS.nodeName])).toEqual(['gone']);
    expect(staleNodeMetadataConfigMaps(all, skyhook, new Set()).map((cm) => cm.metadata?.name)).toEqual(
      [of('demo', 'n1'), of('demo', 'n2'), of('demo', 'gone')].map((cm) => cm.metadata?.name),
    );
  });
});

describe('stage NodeOps', () => {
  it('name the node metadata ConfigMap for every stage, interrupts included', () => {
    const settings = readSkyhookSettings({}, 'skyhook');
    const op = (stage: CreateStageOp['stage']): CreateStageOp => ({
      kind: 'createStageOp',
      skyhook: 'demo',
      node: 'worker.example.com',
      stage,
      previousRestarts: 0,
      package: { name: 'tuning', version: '1.2.3', image: 'ghcr.io/x/tuning' },
      ...(stage === 'interrupt' ? { interrupt: { type: 'reboot' as const } } : {}),
    });
    for (const stage of ['apply', 'config', 'interrupt', 'post-interrupt'] as const) {
      const mounts = buildStageNodeOp({ op: op(stage), skyhook, settings }).spec.configMapMounts ?? [];
      expect(mounts.find((m) => m.mountPath === NODE_METADATA_MOUNT)?.configMap).toBe(
        'demo-worker-example-com-metadata-07080e04',
      );
    }
  });
});
