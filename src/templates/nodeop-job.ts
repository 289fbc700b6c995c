/**
 * The Job of one NodeOp on one node (pure). The operation's init steps run as init containers, in
 * order. Without an interrupt the NodeOp's command is the main container (the Kairos shape); with
 * one, the command becomes the last init container and the main container writes the sentinel that
 * the reboot pod waits for, so the sentinel exists only once every step has succeeded, and the Job
 * is finished before the host is interrupted (a reboot never re-runs it).
 */
import type {
  V1Container,
  V1EnvVar,
  V1Job,
  V1ResourceRequirements,
  V1Toleration,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { KUBERNETES_NAMES, NODEOP_NAMES } from '../api/names.js';
import type { InitStep, NodeOp, NodeOpSpec } from '../api/nodeop.js';
import { parseDurationMs } from '../util/duration.js';
import {
  nodeOpChildLabels,
  nodeOpOwnerReference,
  sentinelMount,
  sentinelVolume,
  SENTINEL_MOUNT_PATH,
} from './nodeop-common.js';
import type { NodeOpSettings } from './nodeop-settings.js';

export const OPERATION_CONTAINER = 'nodeop';
export const SENTINEL_CONTAINER = 'sentinel-creator';
const HOST_ROOT_VOLUME = 'host-root';

export interface NodeJobInput {
  nodeOp: NodeOp;
  node: string;
  jobName: string;
  settings: NodeOpSettings;
  /** True when an interrupt follows the Job: the main container then writes the sentinel. */
  writesSentinel: boolean;
  /** Create the Job suspended (its NodeOp is held); the controller lifts it later. */
  suspend?: boolean;
  /** True when the interrupt that follows the Job reboots the node. */
  rebootsNode?: boolean;
}

/**
 * The Job's backoffLimit. A Job that Kubernetes' Job controller runs (NODEOP_JOB_RUNNER=kubernetes)
 * and that ends in a reboot gets 0: the reboot can cut its pod off after the last step (the pod then
 * reads as failed), and the Job controller would create the next attempt before anyone asked the
 * reboot pod, running every step again and rebooting the node a second time. With 0 the Job fails
 * instead, the NodeOp controller asks the reboot pod (controllers/nodeop/lost-in-reboot.ts), and a
 * real failure is retried a level up (a Skyhook stage, with backoff) or stays failed (a NodeOp of
 * one's own). The Jobs the NodeOp controller runs itself keep their backoffLimit: it asks the reboot
 * pod before each retry.
 */
function backoffLimitOf(spec: NodeOpSpec, settings: NodeOpSettings, endsInReboot: boolean): number {
  if (endsInReboot && settings.jobRunner === 'kubernetes') return 0;
  return spec.backoffLimit ?? settings.defaultBackoffLimit;
}

function toResources(resources: InitStep['resources']): V1ResourceRequirements | undefined {
  if (!resources?.cpuRequest || !resources.cpuLimit || !resources.memoryRequest || !resources.memoryLimit)
    return undefined;
  return {
    requests: { cpu: String(resources.cpuRequest), memory: String(resources.memoryRequest) },
    limits: { cpu: String(resources.cpuLimit), memory: String(resources.memoryLimit) },
  };
}

/** Job activeDeadlineSeconds from spec.stageTimeout; unset, 0 or unreadable = no deadline. */
export function deadlineSeconds(stageTimeout: string | undefined): number | undefined {
  if (!stageTimeout) return undefined;
  try {
    const ms = parseDurationMs(stageTimeout);
    return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : undefined;
  } catch {
    return undefined;
  }
}

/** The host root, then each of `spec.configMapMounts` (read-only), in every container that runs on the host. */
function hostMounts(spec: NodeOpSpec, hostMountPath: string): V1VolumeMount[] {
  return [
    { name: HOST_ROOT_VOLUME, mountPath: hostMountPath, mountPropagation: 'HostToContainer' },
    ...(spec.configMapMounts ?? []).map((m) => ({ name: m.name, mountPath: m.mountPath, readOnly: true })),
  ];
}

function jobVolumes(spec: NodeOpSpec, writesSentinel: boolean): V1Volume[] {
  return [
    { name: HOST_ROOT_VOLUME, hostPath: { path: '/' } },
    ...(writesSentinel ? [sentinelVolume] : []),
    ...(spec.configMapMounts ?? []).map((m) => ({ name: m.name, configMap: { name: m.configMap } })),
  ];
}

/** The init steps and the operation, each privileged on the host with the NodeOp's env and mounts. */
function hostContainers(spec: NodeOpSpec, image: string): { steps: V1Container[]; operation: V1Container } {
  const hostMountPath = spec.hostMountPath ?? '/host';
  const mounts = hostMounts(spec, hostMountPath);
  const baseEnv: V1EnvVar[] = [
    { name: 'HOST_DIR', value: hostMountPath },
    { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
    ...((spec.env ?? []) as V1EnvVar[]),
  ];
  const hostContainer = (name: string, step: Partial<InitStep>): V1Container => {
    const resources = toResources(step.resources);
    return {
      name,
      image: step.image ?? image,
      ...(step.command ? { command: step.command } : {}),
      ...(step.args ? { args: step.args } : {}),
      env: [...baseEnv, ...((step.env ?? []) as V1EnvVar[])],
      ...(resources ? { resources } : {}),
      securityContext: { privileged: true },
      volumeMounts: mounts,
      // A failed container's status then carries its log's last lines (at most 80 lines or 2 KB),
      // kept with the pod: the StageFailed Event's explanation survives the kubelet removing the
      // dead container and its log file, which it may do as soon as the pod has failed.
      terminationMessagePolicy: 'FallbackToLogsOnError',
    };
  };
  return {
    steps: (spec.initSteps ?? []).map((step) => hostContainer(step.name, step)),
    operation: hostContainer(OPERATION_CONTAINER, {
      command: spec.command,
      ...(spec.resources ? { resources: spec.resources } : {}),
    }),
  };
}

/** The main container of a Job an interrupt follows: it writes the sentinel the reboot pod waits for. */
function sentinelContainer(spec: NodeOpSpec, jobName: string, settings: NodeOpSettings): V1Container {
  const mainResources = toResources(spec.resources);
  return {
    name: SENTINEL_CONTAINER,
    image: settings.helperImage,
    command: [
      '/bin/sh',
      '-c',
      `echo "Job $JOB_NAME succeeded at $(date -u)" > "${SENTINEL_MOUNT_PATH}/$JOB_NAME.tmp" && mv "${SENTINEL_MOUNT_PATH}/$JOB_NAME.tmp" "${SENTINEL_MOUNT_PATH}/$JOB_NAME"`,
    ],
    env: [{ name: 'JOB_NAME', value: jobName }],
    ...(mainResources ? { resources: mainResources } : {}),
    volumeMounts: [sentinelMount],
  };
}

export function buildNodeJob(input: NodeJobInput): V1Job {
  const { nodeOp, node, jobName, settings, writesSentinel, suspend } = input;
  const spec = nodeOp.spec;
  const labels = nodeOpChildLabels(nodeOp, node);
  const { steps, operation } = hostContainers(spec, spec.image ?? settings.defaultImage);
  // The Job pod is pinned with nodeName (no scheduler), so only NoExecute taints could still evict it;
  // it tolerates the cordon it runs under plus whatever the NodeOp lists.
  const tolerations: V1Toleration[] = [
    { key: KUBERNETES_NAMES.unschedulableTaint, operator: 'Exists', effect: 'NoSchedule' },
    ...((spec.tolerations ?? []) as V1Toleration[]),
  ];
  const activeDeadlineSeconds = deadlineSeconds(spec.stageTimeout);

  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName,
      namespace: nodeOp.metadata.namespace,
      labels,
      ownerReferences: [nodeOpOwnerReference(nodeOp)],
    },
    spec: {
      // Run by the NodeOp controller (jobs/job-runner/), not the Job controller: far fewer writes.
      ...(settings.jobRunner === 'operator' ? { managedBy: NODEOP_NAMES.jobManager } : {}),
      backoffLimit: backoffLimitOf(spec, settings, writesSentinel && input.rebootsNode === true),
      ...(suspend ? { suspend: true } : {}),
      // The success TTL; the controller lengthens it to the failure TTL when it sees the Job fail
      // (one write on the rare path instead of one per successful stage). A Job that fails while
      // no operator runs for longer than the success TTL loses its evidence early; the NodeOp then
      // reports the Job gone, and the failure Event, if any, has the log tail.
      ttlSecondsAfterFinished: settings.jobTtlSucceededSeconds,
      ...(activeDeadlineSeconds ? { activeDeadlineSeconds } : {}),
      template: {
        metadata: { labels },
        spec: {
          nodeName: node,
          restartPolicy: 'Never',
          hostPID: true,
          // In the host's network the cluster DNS is only used with ClusterFirstWithHostNet.
          ...(spec.hostNetwork ? { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' } : {}),
          automountServiceAccountToken: false,
          ...(spec.terminationGracePeriodSeconds !== undefined
            ? { terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds }
            : {}),
          tolerations,
          ...(spec.imagePullSecrets?.length ? { imagePullSecrets: spec.imagePullSecrets } : {}),
          ...(writesSentinel || steps.length > 0
            ? { initContainers: writesSentinel ? [...steps, operation] : steps }
            : {}),
          containers: [writesSentinel ? sentinelContainer(spec, jobName, settings) : operation],
          volumes: jobVolumes(spec, writesSentinel),
        },
      },
    },
  };
}
