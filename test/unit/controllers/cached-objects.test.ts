/**
 * The informer transforms keep what every reader of the caches reads: each reader gives the same
 * answer on the trimmed object as on the whole one, and what has no reader is gone.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Job, V1Node, V1Pod } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  KINDS,
  NODEOP_NAMES,
  nodeAnnotations,
  nodeConditionTypes,
  nodeLabels,
  POD_ANNOTATIONS,
} from '../../../src/api/names.js';
import { cachedBarrierPod, cachedJob, cachedNode, cachedNodeOpPod } from '../../../src/controllers/cached-objects.js';
import { bootIdOf, isNodeReady, rebootObserved } from '../../../src/controllers/nodeop/node-status.js';
import { targetNodes } from '../../../src/controllers/nodeop/pacing.js';
import { hasSkyhookTraces } from '../../../src/controllers/skyhook/write/node-writes.js';
import {
  podChangeMatters,
  podView,
  podViewsByNode,
  skyhooksHeldByPod,
} from '../../../src/controllers/skyhook/views/node-pods.js';
import { nodeViewOf } from '../../../src/controllers/skyhook/views/node-view.js';
import { cordonedBy, isCordonedBy } from '../../../src/jobs/cordon/claims.js';
import { describeFailedContainer, isJobFinished, jobProgress, stuckDeadline } from '../../../src/jobs/job-progress.js';
import { ownerKeys } from '../../../src/kube/controller.js';
import type { Skyhook } from '../../../src/api/skyhook.js';

const managedFields = [
  { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} } },
];

/** A Node as the API server lists it (dates are strings: the caches hold parsed JSON). */
function fullNode(
  name: string,
  extra: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ready?: boolean;
    unschedulable?: boolean;
  } = {},
): V1Node {
  return JSON.parse(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        uid: `uid-${name}`,
        resourceVersion: '42',
        creationTimestamp: '2030-01-01T00:00:00Z',
        labels: { 'kubernetes.io/hostname': name, type: 'kwok', ...extra.labels },
        annotations: { 'node.alpha.kubernetes.io/ttl': '0', ...extra.annotations },
        managedFields,
      },
      spec: {
        podCIDR: '10.0.0.0/24',
        providerID: `kwok://${name}`,
        taints: [
          { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
          { key: 'other', effect: 'NoExecute' },
        ],
        ...(extra.unschedulable ? { unschedulable: true } : {}),
      },
      status: {
        addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
        allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
        capacity: { cpu: '32', memory: '256Gi', pods: '110' },
        conditions: [
          {
            type: 'Ready',
            status: extra.ready === false ? 'False' : 'True',
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status',
            lastHeartbeatTime: '2030-01-01T00:05:00Z',
            lastTransitionTime: '2030-01-01T00:00:00Z',
          },
          {
            type: nodeConditionTypes.notReady('scr'),
            status: 'True',
            reason: 'Incomplete',
            message: 'Skyhook scr Ready',
            lastHeartbeatTime: '2030-01-01T00:05:00Z',
            lastTransitionTime: '2030-01-01T00:01:00Z',
          },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        images: [
          { names: ['registry.example/huge/image@sha256:abc', 'registry.example/huge/image:1'], sizeBytes: 123456789 },
        ],
        nodeInfo: {
          architecture: 'amd64',
          bootID: `boot-${name}`,
          containerRuntimeVersion: 'containerd://2',
          kernelVersion: '6.1',
          kubeProxyVersion: '',
          kubeletVersion: 'v1.33',
          machineID: 'm',
          operatingSystem: 'linux',
          osImage: 'Ubuntu',
          systemUUID: 's',
        },
        phase: 'Running',
        volumesAttached: [{ name: 'kubernetes.io/csi/x', devicePath: '' }],
        volumesInUse: ['kubernetes.io/csi/x'],
      },
    }),
  ) as V1Node;
}

function skyhook(name: string, spec: Partial<Skyhook['spec']>): Skyhook {
  return {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: KINDS.skyhook.kind,
    metadata: { name },
    spec: { packages: {}, ...spec },
  } as Skyhook;
}

describe('cachedNode', () => {
  const annotations = {
    [nodeAnnotations.nodeState('scr')]:
      '{"pkg|1.0.0":{"name":"pkg","version":"1.0.0","stage":"apply","state":"in_progress"}}',
    [nodeAnnotations.status('scr')]: 'in_progress',
    [NODEOP_NAMES.cordonedBy]: 'skyhook/op@uid',
  };
  const nodes = [
    fullNode('node-a', { annotations, labels: { [nodeLabels.status('scr')]: 'in_progress' }, unschedulable: true }),
    fullNode('node-b', { ready: false }),
    fullNode('node-c', { labels: { 'node-role.kubernetes.io/control-plane': '' } }),
  ];
  const trimmed = nodes.map(cachedNode);

  it('gives the planner, cordon, reboot and cleanup readers the same answers', () => {
    nodes.forEach((node, i) => {
      const kept = trimmed[i]!;
      expect(nodeViewOf(kept)).toEqual(nodeViewOf(node));
      expect(isNodeReady(kept)).toBe(isNodeReady(node));
      expect(bootIdOf(kept)).toBe(bootIdOf(node));
      expect(rebootObserved({ phase: 'Completed', bootID: 'before' }, kept)).toBe(
        rebootObserved({ phase: 'Completed', bootID: 'before' }, node),
      );
      expect(cordonedBy(kept)).toBe(cordonedBy(node));
      expect(isCordonedBy(kept, 'skyhook/op@uid')).toBe(isCordonedBy(node, 'skyhook/op@uid'));
      expect(hasSkyhookTraces(kept, 'scr')).toBe(hasSkyhookTraces(node, 'scr'));
    });
    expect(targetNodes({ nodeSelector: { matchLabels: { type: 'kwok' } } }, trimmed)).toEqual(
      targetNodes({ nodeSelector: { matchLabels: { type: 'kwok' } } }, nodes),
    );
  });

  it('keeps metadata whole (node-metadata ConfigMaps, Events, read-your-writes), the spec and the conditions as they are', () => {
    const { managedFields: _m, ...metadata } = nodes[0]!.metadata!;
    expect(trimmed[0]!.metadata).toEqual(metadata);
    expect(trimmed[0]!.spec).toEqual(nodes[0]!.spec);
    // Node writes keep a condition's lastTransitionTime unless its status flips.
    expect(trimmed[0]!.status?.conditions).toEqual(nodes[0]!.status?.conditions);
    expect(trimmed[0]!.apiVersion).toBe('v1');
  });

  it('drops managedFields and the status nobody reads', () => {
    const kept = trimmed[0]!;
    expect(kept.metadata?.managedFields).toBeUndefined();
    expect(Object.keys(kept.status ?? {}).sort()).toEqual(['allocatable', 'capacity', 'conditions', 'nodeInfo']);
    expect(kept.status?.nodeInfo).toEqual({ bootID: 'boot-node-a' });
    expect(JSON.stringify(kept).length).toBeLessThan(JSON.stringify(nodes[0]).length * 0.7);
  });

  it('leaves absent parts absent', () => {
    expect(cachedNode({ metadata: { name: 'bare' } })).toEqual({ metadata: { name: 'bare' } });
    expect(cachedNode({ metadata: { name: 'new' }, status: { phase: 'Pending' } })).toEqual({
      metadata: { name: 'new' },
      status: {},
    });
  });
});

function fullPod(
  name: string,
  extra: {
    phase?: string;
    node?: string;
    labels?: Record<string, string>;
    deleting?: boolean;
    owner?: { kind: string; name: string; apiVersion?: string };
    status?: V1Pod['status'];
    annotations?: Record<string, string>;
  } = {},
): V1Pod {
  return JSON.parse(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: 'skyhook',
        uid: `uid-${name}`,
        resourceVersion: '7',
        creationTimestamp: '2030-01-01T00:00:00Z',
        ...(extra.deleting ? { deletionTimestamp: '2030-01-01T00:10:00Z' } : {}),
        labels: { app: 'web', ...extra.labels },
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(500), ...extra.annotations },
        ownerReferences: [
          {
            apiVersion: extra.owner?.apiVersion ?? 'apps/v1',
            kind: extra.owner?.kind ?? 'ReplicaSet',
            name: extra.owner?.name ?? 'web-1',
            uid: 'o',
            controller: true,
          },
        ],
        managedFields,
      },
      spec: {
        nodeName: extra.node ?? 'node-a',
        containers: [
          { name: 'main', image: 'busybox', command: ['sh', '-c', 'sleep 1'], env: [{ name: 'A', value: 'b' }] },
        ],
        initContainers: [{ name: 'init', image: 'busybox', command: ['true'] }],
        volumes: [{ name: 'root', hostPath: { path: '/' } }],
        tolerations: [{ operator: 'Exists' }],
      },
      status: extra.status ?? { phase: extra.phase ?? 'Running', podIP: '10.0.0.2', qosClass: 'BestEffort' },
    }),
  ) as V1Pod;
}

describe('cachedBarrierPod', () => {
  const pods = [
    fullPod('web-a', { labels: { hold: 'yes' } }),
    fullPod('web-b', { node: 'node-b', phase: 'Pending', deleting: true }),
    fullPod('web-c', { labels: { hold: 'yes' }, node: 'node-b', owner: { kind: 'DaemonSet', name: 'ds' } }),
  ];
  const trimmed = pods.map(cachedBarrierPod);

  it('gives node-pods.ts the same answers', () => {
    for (const [i, pod] of pods.entries()) expect(podView(trimmed[i]!)).toEqual(podView(pod));
    expect(podViewsByNode(trimmed)).toEqual(podViewsByNode(pods));
    const scrs = [
      skyhook('scr', {
        podNonInterruptLabels: { matchLabels: { hold: 'yes' } },
        nodeSelectors: { matchLabels: { type: 'kwok' } },
      }),
    ];
    const nodeOf = (name: string): V1Node => fullNode(name);
    expect(skyhooksHeldByPod(trimmed, scrs, nodeOf)).toEqual(skyhooksHeldByPod(pods, scrs, nodeOf));
    expect(skyhooksHeldByPod(trimmed, scrs, nodeOf)).toEqual(['scr']);
    expect(podChangeMatters(trimmed[0]!, trimmed[1]!)).toBe(podChangeMatters(pods[0]!, pods[1]!));
    const restarted = fullPod('web-a', {
      labels: { hold: 'yes' },
      status: {
        phase: 'Running',
        containerStatuses: [{ name: 'main', image: 'busybox', imageID: '', ready: true, restartCount: 3 }],
      },
    });
    expect(podChangeMatters(cachedBarrierPod(restarted), trimmed[0]!)).toBe(false);
  });

  it('keeps the non-interruptible opt-in annotation (and no other), which wakes every SCR on the node', () => {
    const optedIn = fullPod('train', { annotations: { [POD_ANNOTATIONS.nonInterruptible]: 'true' } });
    const kept = cachedBarrierPod(optedIn);
    expect(kept.metadata?.annotations).toEqual({ [POD_ANNOTATIONS.nonInterruptible]: 'true' });
    expect(podView(kept)).toEqual({ ...podView(optedIn), nonInterruptible: true });
    expect(podView(trimmed[0]!).nonInterruptible).toBeUndefined();
    expect(podViewsByNode([kept, ...trimmed], true)).toEqual(new Map([['node-a', [podView(kept)]]]));
    const scrs = [skyhook('any', { nodeSelectors: { matchLabels: { type: 'kwok' } } })];
    expect(skyhooksHeldByPod([kept], scrs, (name) => fullNode(name))).toEqual(['any']);
    expect(skyhooksHeldByPod([trimmed[0]!], scrs, (name) => fullNode(name))).toEqual([]);
    expect(podChangeMatters(kept, cachedBarrierPod(fullPod('train')))).toBe(true);
  });

  it('keeps only what the barrier reads (plus resourceVersion for the informer)', () => {
    expect(trimmed[1]).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-b',
        namespace: 'skyhook',
        uid: 'uid-web-b',
        resourceVersion: '7',
        creationTimestamp: '2030-01-01T00:00:00Z',
        deletionTimestamp: '2030-01-01T00:10:00Z',
        labels: { app: 'web' },
        ownerReferences: pods[1]!.metadata!.ownerReferences,
      },
      spec: { nodeName: 'node-b', containers: [] },
      status: { phase: 'Pending' },
    });
  });
});

describe('cachedNodeOpPod and cachedJob', () => {
  const nodeOpOwner = { apiVersion: `${API_GROUP}/${API_VERSION}`, kind: KINDS.nodeOp.kind, name: 'op-1' };
  const jobOwner = { apiVersion: 'batch/v1', kind: 'Job', name: 'op-1-node-a' };
  const labels = { [NODEOP_NAMES.nodeOpLabel]: 'op-1', 'batch.kubernetes.io/job-name': 'op-1-node-a' };
  const pulling = fullPod('op-1-node-a-x', {
    labels,
    owner: jobOwner,
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: new Date('2030-01-01T00:00:05Z') }],
      initContainerStatuses: [
        {
          name: 'init',
          image: 'x.invalid/y',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } },
        },
      ],
    },
  });
  const crashed = fullPod('op-1-node-a-y', {
    labels,
    owner: jobOwner,
    status: {
      phase: 'Failed',
      containerStatuses: [
        {
          name: 'main',
          image: 'busybox',
          imageID: '',
          ready: false,
          restartCount: 1,
          state: { terminated: { exitCode: 2, reason: 'Error', message: 'step failed' } },
        },
      ],
    },
  });
  const rebootPod = fullPod('op-1-node-a-reboot', {
    labels: { [NODEOP_NAMES.nodeOpLabel]: 'op-1' },
    owner: nodeOpOwner,
    phase: 'Succeeded',
  });
  const pods = [pulling, crashed, rebootPod];
  const trimmedPods = pods.map(cachedNodeOpPod);

  const fullJob = (
    conditions: { type: string; reason?: string; message?: string }[],
    extra: { suspend?: boolean; failed?: number } = {},
  ): V1Job =>
    JSON.parse(
      JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          name: 'op-1-node-a',
          namespace: 'skyhook',
          uid: 'job-uid',
          resourceVersion: '9',
          labels,
          ownerReferences: [{ ...nodeOpOwner, uid: 'op-uid', controller: true }],
          managedFields,
        },
        spec: {
          backoffLimit: 1,
          ttlSecondsAfterFinished: 3600,
          activeDeadlineSeconds: 600,
          suspend: extra.suspend ?? false,
          selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'job-uid' } },
          template: pulling.spec ? { metadata: { labels }, spec: pulling.spec } : {},
        },
        status: {
          failed: extra.failed ?? 0,
          conditions: conditions.map((c) => ({ ...c, status: 'True', lastTransitionTime: '2030-01-01T00:01:00Z' })),
        },
      }),
    ) as V1Job;
  const jobs = [
    fullJob([]),
    fullJob([], { suspend: true }),
    fullJob([{ type: 'SuccessCriteriaMet' }, { type: 'Complete' }]),
    fullJob(
      [
        {
          type: 'FailureTarget',
          reason: 'BackoffLimitExceeded',
          message: 'Job has reached the specified backoff limit',
        },
        { type: 'Failed', reason: 'BackoffLimitExceeded' },
      ],
      { failed: 2 },
    ),
  ];

  it('gives Job progress the same answers for every Job state, with and without a stuck pod', () => {
    const now = Date.parse('2030-01-01T00:20:00Z');
    for (const job of jobs) {
      const kept = cachedJob(job);
      expect(isJobFinished(kept)).toBe(isJobFinished(job));
      for (const podSet of [[pulling], [crashed], pods]) {
        for (const stuckMs of [60_000, 24 * 3600_000]) {
          expect(jobProgress(kept, podSet.map(cachedNodeOpPod), now, stuckMs)).toEqual(
            jobProgress(job, podSet, now, stuckMs),
          );
        }
      }
    }
    expect(stuckDeadline(trimmedPods, 60_000)).toBe(stuckDeadline(pods, 60_000));
    for (const [i, pod] of pods.entries())
      expect(describeFailedContainer(trimmedPods[i]!)).toBe(describeFailedContainer(pod));
  });

  it('keeps what the reconciler reads of a Job: suspension, retention, owner', () => {
    const kept = cachedJob(jobs[1]!);
    expect(kept.spec?.suspend).toBe(true);
    expect(kept.spec?.ttlSecondsAfterFinished).toBe(3600);
    const toNodeOp = ownerKeys(KINDS.nodeOp.kind, { apiGroup: API_GROUP });
    expect(toNodeOp(kept)).toEqual(toNodeOp(jobs[1]!));
    expect(toNodeOp(kept)).toEqual(['skyhook/op-1']);
  });

  it('keeps what maps a pod to its NodeOp and Job, and the pod status whole', () => {
    const toNodeOp = ownerKeys(KINDS.nodeOp.kind, { apiGroup: API_GROUP });
    const toJob = ownerKeys('Job', { apiGroup: 'batch' });
    pods.forEach((pod, i) => {
      const kept = trimmedPods[i]!;
      expect(toNodeOp(kept)).toEqual(toNodeOp(pod));
      expect(toJob(kept)).toEqual(toJob(pod));
      expect(kept.metadata?.labels).toEqual(pod.metadata?.labels);
      expect(kept.status).toEqual(pod.status);
      expect(kept.spec?.nodeName).toBe(pod.spec?.nodeName);
    });
  });

  it('drops the pod spec, the pod template and managedFields', () => {
    const pod = trimmedPods[0]!;
    expect(pod.spec).toEqual({ nodeName: 'node-a', containers: [] });
    expect(pod.metadata?.managedFields).toBeUndefined();
    const job = cachedJob(jobs[0]!);
    expect(job.spec?.template).toEqual({});
    expect(job.spec?.selector).toBeUndefined();
    expect(job.metadata?.managedFields).toBeUndefined();
    expect(JSON.stringify(job).length).toBeLessThan(JSON.stringify(jobs[0]).length / 2);
  });
});
