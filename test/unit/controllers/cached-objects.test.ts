/**
 * The informer transforms keep what every reader of the caches reads: each reader gives the same
 * answer on the trimmed object as on the whole one, and what has no reader is gone.
 */
import { describe, expect, it } from '@jest/globals';
import type { CoreV1Api, V1Job, V1Node, V1Pod } from '@kubernetes/client-node';
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
import {
  cachedNodeOp,
  cachedSpecSuffices,
  finishedNodeOpSpec,
  isFinishedNodeOp,
  readableNodeOp,
} from '../../../src/controllers/cached-nodeops.js';
import { NodeOpsByNode } from '../../../src/controllers/nodeop/cache-indexes.js';
import { viewOf } from '../../../src/controllers/nodeop/context.js';
import {
  isOnlyFinish,
  isSucceededPod,
  jobChanged,
  jobNews,
  mayStartNodes,
  podChanged,
  podHasNews,
  podNews,
} from '../../../src/controllers/nodeop/event-filters.js';
import { HeldEntries, isHeldBack, planStatusWrite } from '../../../src/controllers/nodeop/status-write.js';
import type { CreateStageOp } from '../../../src/controllers/skyhook/plan/planner-types.js';
import { stageOpOwner } from '../../../src/controllers/skyhook/views/cache-indexes.js';
import { summarize } from '../../../src/controllers/skyhook/views/op-summary.js';
import { describeFailedStage } from '../../../src/controllers/skyhook/write/failed-stage-report.js';
import { finishedAtMs, isRunByNodeOpController, planJobRun } from '../../../src/jobs/job-runner/run-plan.js';
import { silentLogger } from '../../../src/kube/logger.js';
import { readNodeOpSettings } from '../../../src/templates/nodeop-settings.js';
import { stageJob, stageNodeOp, stagePod, stageSkyhook, type StageMoment } from './stage-objects.js';
import { bootIdOf, isNodeReady, rebootObserved } from '../../../src/controllers/nodeop/node-status.js';
import { planStarts, targetNodes, targetNodesOf } from '../../../src/controllers/nodeop/pacing.js';
import { hasSkyhookTraces } from '../../../src/controllers/skyhook/write/node-writes.js';
import {
  podChangeMatters,
  podView,
  podViewsByNode,
  skyhooksHeldByPod,
} from '../../../src/controllers/skyhook/views/node-pods.js';
import { nodeViewOf } from '../../../src/controllers/skyhook/views/node-view.js';
import { cordonedBy, isCordonedBy } from '../../../src/jobs/cordon/claims.js';
import {
  describeFailedContainer,
  failedTermination,
  isJobFinished,
  jobProgress,
  stuckDeadline,
} from '../../../src/jobs/job-progress.js';
import { ownerKeys } from '../../../src/kube/controller.js';
import type { NodeOp } from '../../../src/api/nodeop.js';
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

  it('keeps what maps a pod to its NodeOp and Job, and the status of a pod that has not finished whole', () => {
    const toNodeOp = ownerKeys(KINDS.nodeOp.kind, { apiGroup: API_GROUP });
    const toJob = ownerKeys('Job', { apiGroup: 'batch' });
    pods.forEach((pod, i) => {
      const kept = trimmedPods[i]!;
      expect(toNodeOp(kept)).toEqual(toNodeOp(pod));
      expect(toJob(kept)).toEqual(toJob(pod));
      expect(kept.metadata?.labels).toEqual(pod.metadata?.labels);
      expect(kept.spec?.nodeName).toBe(pod.spec?.nodeName);
    });
    // A finished pod keeps what is read of it (below: 'a finished stage')
    expect(trimmedPods[0]!.status).toEqual(pulling.status);
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

/**
 * A finished stage (its NodeOp, Job and pod, as the operator builds them and the API server and a
 * kubelet store them) stays cached for an hour: each keeps only what its readers read of a finished
 * object, and every reader answers on it as on the object kept whole.
 */
describe('a finished stage', () => {
  const now = Date.parse('2030-01-01T00:05:00Z');
  const nodeOpSettings = readNodeOpSettings({});
  const toNodeOp = ownerKeys(KINDS.nodeOp.kind, { apiGroup: API_GROUP });
  const toJob = ownerKeys('Job', { apiGroup: 'batch' });
  const stage = (moment: StageMoment, extra: Partial<CreateStageOp> = {}) => {
    const op = stageNodeOp('node-a', moment, extra);
    const job = stageJob(op, moment);
    return { op, job, pod: stagePod(job, moment) };
  };
  const succeeded = stage('succeeded');
  const failed = stage('failed');
  const running = stage('running');
  const interrupted = stage('failed', { stage: 'interrupt', interrupt: { type: 'reboot' }, cordon: true });

  /** A pod that failed by its Job's deadline while a container still waited on a stuck reason. */
  const timedOut = ((): V1Pod => {
    const pod = stagePod(failed.job, 'failed');
    const status = pod.status!;
    status.reason = 'DeadlineExceeded';
    status.message = 'Pod was active on the node longer than the specified deadline';
    status.initContainerStatuses![0]!.state = { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling' } };
    return pod;
  })();

  /** What the NodeOp controller and the Skyhook controller read of a NodeOp that finished. */
  function nodeOpAnswers(op: NodeOp) {
    const nodes = { get: (name: string) => fullNode(name), list: () => [fullNode('node-a'), fullNode('node-b')] };
    const targets = targetNodesOf(op.spec, nodes);
    const statuses = op.status?.nodeStatuses ?? {};
    const pacing = planStarts({
      targets,
      statuses,
      busyNodes: new Set(),
      concurrency: op.spec.concurrency ?? 0,
      stopOnFailure: op.spec.stopOnFailure ?? false,
    });
    const byNode = new NodeOpsByNode();
    byNode.upsert(op);
    const view = viewOf(op, 'skyhook/x', { ...nodeOpSettings, interruptCommands: nodeOpSettings.interruptCommands });
    return {
      targets,
      pacing,
      write: planStatusWrite({ nodeOp: op, targets, pacing, statuses, now }),
      heldBack: Object.values(statuses).map((entry) => isHeldBack(op, undefined, entry, now)),
      mayStart: mayStartNodes(op),
      filed: ['node-a', 'node-b'].map((name) => byNode.of(fullNode(name))),
      plan: view.plan,
      owner: view.owner,
      suspended: view.suspended,
      // node-end.ts finish, the finalizer, notify (Events), stage metrics.
      ends: [op.spec.cordon, op.spec.uncordonOnFailure, op.spec.eventVerbosity, op.spec.skyhookStage],
      summary: summarize(op, stageSkyhook),
      index: stageOpOwner(op),
    };
  }

  it('keeps a finished NodeOp whole but for the spec that only builds its Jobs, reboot pods and drains', () => {
    for (const { op } of [succeeded, failed]) {
      const kept = cachedNodeOp(op);
      const { managedFields: _m, ...metadata } = op.metadata;
      expect(kept.metadata).toEqual(metadata);
      expect(kept.status).toEqual(op.status);
      expect(kept.spec).toEqual({
        targetNodes: ['node-a'],
        command: [],
        cordon: false,
        uncordonOnFailure: false,
        rebootOnSuccess: false,
        concurrency: 0,
        stopOnFailure: false,
        eventVerbosity: 'Quiet',
        skyhookStage: op.spec.skyhookStage,
      });
      expect(JSON.stringify(kept).length).toBeLessThan(JSON.stringify(readableNodeOp(op)).length * 0.5);
    }
    const kept = cachedNodeOp(interrupted.op);
    expect(kept.spec.interrupt).toEqual({ type: 'reboot' });
    expect(kept.spec.cordon).toBe(true);
    expect(kept.spec.initSteps).toBeUndefined();
  });

  it("gives a finished NodeOp's readers the same answers", async () => {
    for (const { op } of [succeeded, failed, interrupted]) {
      expect(nodeOpAnswers(cachedNodeOp(op))).toEqual(nodeOpAnswers(readableNodeOp(op)));
      const core = {
        listNamespacedPod: async () => ({ items: [failed.pod] }),
        readNamespacedPodLog: async () => 'sysctl: cannot stat /proc/sys/vm/x',
      } as unknown as CoreV1Api;
      expect(await describeFailedStage(core, cachedNodeOp(op), silentLogger())).toEqual(
        await describeFailedStage(core, readableNodeOp(op), silentLogger()),
      );
    }
    // The planner reads the failure of the failed one.
    expect(summarize(cachedNodeOp(failed.op), stageSkyhook).phase).toBe('Failed');
    expect(summarize(cachedNodeOp(failed.op), stageSkyhook).finishedAt).toBe(Date.parse('2030-01-01T00:00:42Z'));
  });

  it('keeps a NodeOp whole while it may still start or follow a node', () => {
    const whole = (op: NodeOp): void => {
      expect(isFinishedNodeOp(op)).toBe(false);
      expect(cachedNodeOp(op)).toEqual(readableNodeOp(op));
    };
    whole(running.op);
    const done = succeeded.op;
    const entry = done.status!.nodeStatuses!['node-a']!;
    // Its interrupt is still pending.
    whole({ ...done, status: { ...done.status, nodeStatuses: { 'node-a': { ...entry, rebootStatus: 'pending' } } } });
    // Another target has no entry yet (a node not created yet, or one added by an edit: back to whole on that event).
    whole({ ...done, spec: { ...done.spec, targetNodes: ['node-a', 'node-b'] } });
    // Failed, and another node still runs.
    const runningEntry = running.op.status!.nodeStatuses!['node-a']!;
    whole({
      ...failed.op,
      spec: { ...failed.op.spec, targetNodes: ['node-a', 'node-b'] },
      status: { ...failed.op.status, nodeStatuses: { ...failed.op.status!.nodeStatuses, 'node-b': runningEntry } },
    });
    // It selects nodes: one may match later.
    const { targetNodes: _t, skyhookStage: _s, ...generic } = done.spec;
    whole({ ...done, spec: { ...generic, nodeSelector: { matchLabels: { type: 'kwok' } } } });
  });

  it('trims by the NodeOp alone, the same on every event, and says finished of the cached copy too', () => {
    for (const { op } of [succeeded, failed, interrupted, running]) {
      const kept = cachedNodeOp(op);
      expect(cachedNodeOp(kept)).toEqual(kept);
      expect(isFinishedNodeOp(kept)).toBe(isFinishedNodeOp(op));
      expect(finishedNodeOpSpec(finishedNodeOpSpec(op.spec))).toEqual(finishedNodeOpSpec(op.spec));
      // Key order too: the echo of a status write compares specs as JSON (nodeop-reads.ts).
      expect(JSON.stringify(finishedNodeOpSpec(kept.spec))).toBe(JSON.stringify(finishedNodeOpSpec(op.spec)));
    }
  });

  it('has the reconciler read a finished NodeOp whole when it holds an entry that is not final', () => {
    const kept = cachedNodeOp(succeeded.op);
    const held = new HeldEntries();
    expect(cachedSpecSuffices(kept, held.withHeld('skyhook/x', kept))).toBe(true);
    held.remember('skyhook/x', kept, { 'node-b': running.op.status!.nodeStatuses!['node-a']! });
    expect(cachedSpecSuffices(kept, held.withHeld('skyhook/x', kept))).toBe(false);
    // A NodeOp that is not finished is cached whole: its spec always suffices.
    expect(cachedSpecSuffices(cachedNodeOp(running.op), held.withHeld('skyhook/x', running.op))).toBe(true);
  });

  /** What the NodeOp controller reads of a Job's pod (or a reboot pod), with the Job as it is. */
  function podAnswers(pod: V1Pod, job: V1Job) {
    const failure = failedTermination(pod);
    return {
      progress: jobProgress(job, [pod], now, 60_000),
      described: describeFailedContainer(pod),
      failure: failure && [
        failure.container,
        failure.terminated.exitCode,
        failure.terminated.reason,
        failure.terminated.message,
      ],
      exits: [...(pod.status?.containerStatuses ?? [])].map((s) => [
        s.state?.terminated?.exitCode,
        s.lastState?.terminated?.exitCode,
      ]),
      finishedAt: finishedAtMs(pod),
      news: podNews(pod),
      hasNews: podHasNews(pod),
      succeeded: isSucceededPod(pod),
      run: planJobRun(job, [pod], now),
      stuck: stuckDeadline([pod], 60_000),
      owners: [toNodeOp(pod), toJob(pod)],
      identity: [pod.metadata?.name, pod.metadata?.namespace, pod.metadata?.uid, pod.metadata?.resourceVersion],
      times: [pod.metadata?.creationTimestamp, pod.metadata?.deletionTimestamp],
      labels: pod.metadata?.labels,
      phase: pod.status?.phase,
    };
  }

  it("gives a finished pod's readers the same answers, with the Job running or finished", () => {
    const deleting = stagePod(succeeded.job, 'succeeded');
    // As a watch event brings it (the caches hold parsed JSON).
    deleting.metadata!.deletionTimestamp = '2030-01-01T00:01:00Z' as unknown as Date;
    for (const pod of [succeeded.pod, failed.pod, timedOut, deleting]) {
      for (const job of [running.job, succeeded.job, failed.job])
        expect(podAnswers(cachedNodeOpPod(pod), cachedJob(job))).toEqual(podAnswers(pod, job));
      expect(podChanged(cachedNodeOpPod(pod), cachedNodeOpPod(running.pod))).toBe(podChanged(pod, running.pod));
    }
    // The stuck container of the pod failed by its deadline is read (with the pod's transition times).
    expect(podNews(cachedNodeOpPod(timedOut))).toContain('ImagePullBackOff');
  });

  it("keeps of a finished pod its identity, labels, owners, phase, reasons, transitions and containers' ends", () => {
    const kept = cachedNodeOpPod(failed.pod);
    const metadata = failed.pod.metadata!;
    expect(kept.metadata).toEqual({
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
      creationTimestamp: metadata.creationTimestamp,
      labels: metadata.labels,
      ownerReferences: metadata.ownerReferences,
    });
    expect(kept.spec).toEqual({ nodeName: 'node-a', containers: [] });
    expect(Object.keys(kept.status ?? {}).sort()).toEqual([
      'conditions',
      'containerStatuses',
      'initContainerStatuses',
      'phase',
    ]);
    expect(kept.status?.conditions?.[0]).toEqual({
      type: 'PodReadyToStartContainers',
      status: 'False',
      lastTransitionTime: '2030-01-01T00:00:42Z',
    });
    expect(kept.status?.initContainerStatuses?.map((s) => s.state)).toEqual([
      { terminated: { exitCode: 0, reason: 'Completed', finishedAt: '2030-01-01T00:00:42Z' } },
      {
        terminated: {
          exitCode: 3,
          reason: 'Error',
          message: 'sysctl: cannot stat /proc/sys/vm/x\nexit 3\n',
          finishedAt: '2030-01-01T00:00:42Z',
        },
      },
      { waiting: { reason: 'PodInitializing' } },
    ]);
    expect(kept.status?.containerStatuses).toEqual([
      { name: 'nodeop', state: { waiting: { reason: 'PodInitializing' } } },
    ]);
    expect(cachedNodeOpPod(timedOut).status?.reason).toBe('DeadlineExceeded');
    for (const pod of [succeeded.pod, failed.pod])
      expect(JSON.stringify(cachedNodeOpPod(pod)).length).toBeLessThan(JSON.stringify(pod).length * 0.25);
  });

  it('keeps the status of a running pod whole', () => {
    expect(cachedNodeOpPod(running.pod).status).toEqual(running.pod.status);
  });

  /** What the NodeOp controller reads of a Job, with its pods. */
  function jobAnswers(job: V1Job, pods: V1Pod[]) {
    return {
      finished: isJobFinished(job),
      news: [jobNews(job), jobNews(job, true), jobNews(job, false, false)],
      progress: jobProgress(job, pods, now, 60_000),
      run: planJobRun(job, pods, now),
      ours: isRunByNodeOpController(job),
      owners: toNodeOp(job),
      identity: [job.metadata?.name, job.metadata?.namespace, job.metadata?.uid, job.metadata?.resourceVersion],
      labels: job.metadata?.labels,
      retention: [job.spec?.suspend, job.spec?.ttlSecondsAfterFinished, job.metadata?.deletionTimestamp],
    };
  }

  it("gives a finished Job's readers the same answers, and keeps only what they read", () => {
    for (const { job, pod } of [succeeded, failed]) {
      const kept = cachedJob(job);
      expect(jobAnswers(kept, [cachedNodeOpPod(pod)])).toEqual(jobAnswers(job, [pod]));
      // A running Job's finish, and a later change of its retention (keepFailedJob).
      const longer: V1Job = { ...job, spec: { ...job.spec!, ttlSecondsAfterFinished: 86_400 } };
      for (const [next, old] of [
        [job, running.job],
        [longer, job],
      ] as const) {
        expect(jobChanged(cachedJob(next), cachedJob(old))).toBe(jobChanged(next, old));
        expect(isOnlyFinish(cachedJob(next), cachedJob(old), true)).toBe(isOnlyFinish(next, old, true));
      }
      expect(Object.keys(kept.spec ?? {}).sort()).toEqual([
        'activeDeadlineSeconds',
        'managedBy',
        'suspend',
        'template',
        'ttlSecondsAfterFinished',
      ]);
      expect(Object.keys(kept.status ?? {}).sort()).toEqual(['conditions', 'failed']);
      expect(kept.status?.conditions?.[1]).toEqual({
        type: job.status?.conditions?.[1]?.type,
        status: 'True',
        reason: job.status?.conditions?.[1]?.reason,
        message: job.status?.conditions?.[1]?.message,
      });
      expect(kept.metadata?.generation).toBeUndefined();
    }
    // A running Job keeps its whole status (its start time and counts are read while it runs).
    expect(cachedJob(running.job).status).toEqual(running.job.status);
    expect(cachedJob(running.job).spec?.backoffLimit).toBe(running.job.spec?.backoffLimit);
  });
});
