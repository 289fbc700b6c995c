/**
 * A stage's NodeOp, Job and pod as the API server stores them, built the way the operator builds
 * them (build/stage-nodeop.ts, templates/nodeop-job.ts, jobs/job-runner/job-pod.ts), with what the
 * API server and a kubelet add (CRD defaults, uid and resourceVersion, managedFields, the Job's
 * generated labels, a kubelet's pod status), at any point of the stage's life. The informer
 * transforms' tests (cached-objects.test.ts) trim these and measure what the trim saves.
 */
import type { V1ContainerStatus, V1Job, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { NodeOp, NodeOpNodeStatus, NodeOpStatus } from '../../../src/api/nodeop.js';
import type { Skyhook } from '../../../src/api/skyhook.js';
import { buildStageNodeOp } from '../../../src/controllers/skyhook/build/stage-nodeop.js';
import type { CreateStageOp } from '../../../src/controllers/skyhook/plan/planner-types.js';
import { readSkyhookSettings } from '../../../src/controllers/skyhook/skyhook-settings.js';
import { buildJobPod } from '../../../src/jobs/job-runner/job-pod.js';
import { buildNodeJob } from '../../../src/templates/nodeop-job.js';
import { readNodeOpSettings } from '../../../src/templates/nodeop-settings.js';
import { nodeJobName } from '../../../src/templates/object-names.js';

const STARTED = '2030-01-01T00:00:00Z';
const ENDED = '2030-01-01T00:00:42Z';
const managedFields = (manager: string) => [
  { manager, operation: 'Update', apiVersion: 'v1', time: STARTED, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
];
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export const stageSkyhook: Skyhook = {
  apiVersion: 'skyhook.nvidia.com/v1alpha1',
  kind: 'Skyhook',
  metadata: { name: 'tuning', uid: '6a1f0c52-4f0e-4c3b-9a57-1f0b5a0f9d11', generation: 3 },
  spec: {
    packages: {
      sysctl: {
        version: '1.4.2',
        image: 'ghcr.io/example/skyhook-packages/sysctl',
        env: [
          { name: 'SYSCTL_PROFILE', value: 'gpu-training' },
          { name: 'LOG_LEVEL', value: 'info' },
        ],
        resources: { cpuRequest: '100m', cpuLimit: '500m', memoryRequest: '64Mi', memoryLimit: '256Mi' },
        configMap: { 'sysctl.conf': 'vm.swappiness=10' },
      },
    },
  },
} as unknown as Skyhook;

export type StageMoment = 'running' | 'succeeded' | 'failed';

/** The stage NodeOp of `node`, as stored, and its status at `moment`. */
export function stageNodeOp(node: string, moment: StageMoment, extra: Partial<CreateStageOp> = {}): NodeOp {
  const op: CreateStageOp = {
    kind: 'createStageOp',
    skyhook: 'tuning',
    node,
    stage: 'apply',
    previousRestarts: 0,
    package: { name: 'sysctl', version: '1.4.2', image: 'ghcr.io/example/skyhook-packages/sysctl' },
    configMap: 'tuning-sysctl-1.4.2',
    stageTimeoutSeconds: 600,
    ...extra,
  };
  const built = buildStageNodeOp({ op, skyhook: stageSkyhook, settings: readSkyhookSettings({}, 'skyhook') });
  const stored = clone(built);
  Object.assign(stored.metadata, {
    uid: `op-uid-${node}`,
    resourceVersion: '120034',
    generation: 1,
    creationTimestamp: STARTED,
    managedFields: managedFields('skyhook-operator'),
  });
  // The CRD's defaults, as the API server fills them in.
  stored.spec = {
    concurrency: 0,
    cordon: false,
    rebootOnSuccess: false,
    stopOnFailure: false,
    uncordonOnFailure: false,
    ...stored.spec,
  };
  stored.status = nodeOpStatus(stored, node, moment);
  return stored;
}

function nodeOpStatus(op: NodeOp, node: string, moment: StageMoment): NodeOpStatus {
  const jobName = nodeJobName(op.metadata.name ?? '', op.metadata.uid ?? '', node);
  const entry: NodeOpNodeStatus = {
    phase: 'Running',
    jobName,
    message: `Job ${jobName} created`,
    restarts: 0,
    startedAt: STARTED,
    lastUpdated: STARTED,
  };
  if (moment === 'succeeded')
    Object.assign(entry, {
      phase: 'Completed',
      rebootStatus: 'not-requested',
      message: `Job ${jobName} completed successfully (pod ${jobName}-0 succeeded)`,
      lastUpdated: ENDED,
    });
  if (moment === 'failed')
    Object.assign(entry, {
      phase: 'Failed',
      restarts: 1,
      message: `Job ${jobName} failed (BackoffLimitExceeded: Job has reached the specified backoff limit (0)); pod ${jobName}-0: container sysctl-apply exited with code 3 (Error: sysctl: cannot stat /proc/sys/vm/x)`,
      lastUpdated: ENDED,
    });
  const phase = moment === 'running' ? 'Running' : moment === 'succeeded' ? 'Completed' : 'Failed';
  return { phase, nodeStatuses: { [node]: entry }, observedGeneration: 1, conditions: [], lastUpdated: ENDED };
}

/** The stage's Job as stored (with the API server's generated selector and labels) at `moment`. */
export function stageJob(op: NodeOp, moment: StageMoment): V1Job {
  const node = op.spec.targetNodes?.[0] ?? '';
  const jobName = nodeJobName(op.metadata.name ?? '', op.metadata.uid ?? '', node);
  const job = clone(
    buildNodeJob({
      nodeOp: op,
      node,
      jobName,
      settings: readNodeOpSettings({}),
      writesSentinel: false,
      suspend: false,
    }),
  );
  const uid = `job-uid-${node}`;
  const generated = {
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': jobName,
    'controller-uid': uid,
    'job-name': jobName,
  };
  Object.assign(job.metadata ?? {}, {
    uid,
    resourceVersion: '120101',
    generation: 1,
    creationTimestamp: STARTED,
    labels: { ...job.metadata?.labels, ...generated },
    managedFields: managedFields('skyhook-operator'),
  });
  const spec = job.spec!;
  Object.assign(spec, {
    parallelism: 1,
    completions: 1,
    completionMode: 'NonIndexed',
    podReplacementPolicy: 'TerminatingOrFailed',
    manualSelector: false,
    suspend: false,
    selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
  });
  spec.template.metadata = { ...spec.template.metadata, labels: { ...spec.template.metadata?.labels, ...generated } };
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: 'True',
    reason,
    message,
    lastProbeTime: ENDED,
    lastTransitionTime: ENDED,
  });
  const finished =
    moment === 'succeeded'
      ? {
          succeeded: 1,
          completionTime: ENDED,
          conditions: [
            condition('SuccessCriteriaMet', 'CompletionsReached', `pod ${jobName}-0 succeeded`),
            condition('Complete', 'CompletionsReached', `pod ${jobName}-0 succeeded`),
          ],
        }
      : {
          conditions: [
            condition('FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit (0)'),
            condition('Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit (0)'),
          ],
        };
  job.status =
    moment === 'running'
      ? ({
          startTime: STARTED,
          active: 1,
          ready: 1,
          terminating: 0,
          uncountedTerminatedPods: {},
        } as unknown as V1Job['status'])
      : (clone({
          startTime: STARTED,
          active: 0,
          ready: 0,
          terminating: 0,
          failed: moment === 'failed' ? 1 : 0,
          uncountedTerminatedPods: {},
          ...finished,
        }) as unknown as V1Job['status']);
  return job;
}

/** The Job's first pod as stored, with a kubelet's status (Kubernetes 1.34 and later) at `moment`. */
export function stagePod(job: V1Job, moment: StageMoment): V1Pod {
  const pod = clone(buildJobPod(job, 0));
  const node = pod.spec?.nodeName ?? '';
  Object.assign(pod.metadata ?? {}, {
    uid: `pod-uid-${node}`,
    resourceVersion: '120188',
    generation: 1,
    creationTimestamp: STARTED,
    managedFields: [...managedFields('skyhook-operator'), ...managedFields('kubelet')],
  });
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  const statuses = containers.map((c, i) => containerStatus(c.name, c.image ?? '', moment, i, containers.length));
  const init = statuses.slice(0, -1);
  const done = moment !== 'running';
  const condition = (type: string, status: boolean, reason?: string) => ({
    type,
    observedGeneration: 1,
    status: status ? 'True' : 'False',
    lastProbeTime: null,
    lastTransitionTime: done ? ENDED : STARTED,
    ...(reason ? { reason } : {}),
  });
  const ended = done ? 'PodCompleted' : undefined;
  const status = clone({
    observedGeneration: 1,
    phase: moment === 'running' ? 'Running' : moment === 'succeeded' ? 'Succeeded' : 'Failed',
    conditions: [
      condition('PodReadyToStartContainers', !done),
      condition('Initialized', moment !== 'failed', moment === 'failed' ? 'ContainersNotInitialized' : ended),
      condition('Ready', !done, ended),
      condition('ContainersReady', !done, ended),
      condition('PodScheduled', true),
    ],
    hostIP: '10.1.0.17',
    hostIPs: [{ ip: '10.1.0.17' }],
    podIP: '10.1.0.17',
    podIPs: [{ ip: '10.1.0.17' }],
    startTime: STARTED,
    initContainerStatuses: init,
    containerStatuses: statuses.slice(-1),
    qosClass: 'Burstable',
  });
  pod.status = status as unknown as V1PodStatus;
  return pod;
}

/** A kubelet's status of container `i` of `count`: a failed stage's fails in its second step, and the rest never ran. */
function containerStatus(
  name: string,
  image: string,
  moment: StageMoment,
  i: number,
  count: number,
): V1ContainerStatus {
  const failing = moment === 'failed' && i === 1;
  const notRun = moment === 'failed' && i > 1;
  const running = moment === 'running' && i === count - 1;
  const containerID = `containerd://${String(i).repeat(8)}0f3e9c1b2a7d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f`;
  const state = notRun
    ? { waiting: { reason: 'PodInitializing' } }
    : running
      ? { running: { startedAt: STARTED } }
      : {
          terminated: {
            exitCode: failing ? 3 : 0,
            reason: failing ? 'Error' : 'Completed',
            ...(failing ? { message: 'sysctl: cannot stat /proc/sys/vm/x\nexit 3\n' } : {}),
            startedAt: STARTED,
            finishedAt: ENDED,
            containerID,
          },
        };
  return clone({
    name,
    state,
    lastState: {},
    ready: !notRun && !failing && moment !== 'failed',
    restartCount: 0,
    image,
    imageID: notRun ? '' : `${image.split(':')[0]}@sha256:${'ab12'.repeat(16)}`,
    ...(notRun ? {} : { containerID }),
    started: running,
    allocatedResources: { cpu: '100m', memory: '64Mi' },
    resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '64Mi' } },
    volumeMounts: [
      { name: 'host-root', mountPath: '/root' },
      { name: 'configmap', mountPath: '/skyhook-package/configmaps', readOnly: true, recursiveReadOnly: 'Disabled' },
      {
        name: 'node-metadata',
        mountPath: '/skyhook-package/node-metadata',
        readOnly: true,
        recursiveReadOnly: 'Disabled',
      },
    ],
    user: { linux: { uid: 0, gid: 0, supplementalGroups: [0, 1, 2, 3, 4, 6, 10, 11, 20, 26, 27] } },
  }) as V1ContainerStatus;
}
