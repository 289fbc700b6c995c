/**
 * The reboot pod of one node (pure). Created before the Job, it waits for that Job's sentinel, then
 * runs the interrupt's commands in the host's namespaces (nsenter into PID 1). Before the first
 * command it turns the sentinel into a `.done` marker holding the boot ID, so when the kubelet
 * restarts it after the reboot (restartPolicy OnFailure, still Running when the host went down) it
 * finds the marker and exits 0 without interrupting again. After a reboot command it waits for the
 * host to go down instead of exiting, for the same reason. It tolerates every taint, so the
 * not-ready/unreachable taints of the reboot itself cannot evict it (a Kairos bug), and it needs no
 * API access.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { NODEOP_NAMES } from '../api/names.js';
import type { NodeOp } from '../api/nodeop.js';
import { inHostNamespaces, type InterruptPlan } from './interrupt-plan.js';
import {
  nodeOpChildLabels,
  nodeOpOwnerReference,
  sentinelMount,
  sentinelVolume,
  SENTINEL_MOUNT_PATH,
  shellQuote,
} from './nodeop-common.js';
import type { NodeOpSettings } from './nodeop-settings.js';
import { rebootPodName } from './object-names.js';

export const REBOOT_CONTAINER = 'reboot';

/** The shell script of the reboot container; JOB_NAME comes from its environment. */
export function rebootScript(plan: InterruptPlan): string {
  const dir = SENTINEL_MOUNT_PATH;
  const run = plan.commands.map((command) => {
    const words = command.map(shellQuote).join(' ');
    const onHost = inHostNamespaces(command).map(shellQuote).join(' ');
    return (
      `echo running on the host: ${words}\n` +
      `${onHost} || { code=$?; rm -f "$marker"; echo "interrupt command failed with exit code $code" >&2; exit "$code"; }`
    );
  });
  return [
    'set -u',
    `sentinel="${dir}/$JOB_NAME"`,
    `marker="${dir}/$JOB_NAME.done"`,
    // Markers of long-finished NodeOps are litter; the Job names they carry are never reused.
    `find ${dir} -name '*.done' -mtime +30 -exec rm -f {} + 2>/dev/null || true`,
    'if [ -e "$marker" ]; then',
    '  echo "the interrupt after Job $JOB_NAME already ran (boot $(cat "$marker"); now boot $(cat /proc/sys/kernel/random/boot_id)); nothing left to do"',
    '  exit 0',
    'fi',
    'echo "waiting for $sentinel, written when Job $JOB_NAME has succeeded"',
    'while [ ! -e "$sentinel" ]; do sleep 2; done',
    'cat /proc/sys/kernel/random/boot_id > "$marker"',
    'rm -f "$sentinel"',
    ...run,
    ...(plan.rebootsNode
      ? ['echo "reboot requested; waiting for the host to go down"', 'while :; do sleep 30; done']
      : ['echo "interrupt done"']),
  ].join('\n');
}

export interface RebootPodInput {
  nodeOp: NodeOp;
  node: string;
  jobName: string;
  plan: InterruptPlan;
  settings: NodeOpSettings;
}

export function buildRebootPod({ nodeOp, node, jobName, plan, settings }: RebootPodInput): V1Pod {
  const spec = nodeOp.spec;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: rebootPodName(jobName),
      namespace: nodeOp.metadata.namespace,
      labels: { ...nodeOpChildLabels(nodeOp, node), [NODEOP_NAMES.rebootLabel]: 'true' },
      annotations: {
        [NODEOP_NAMES.jobAnnotation]: jobName,
        [NODEOP_NAMES.interruptAnnotation]: JSON.stringify({ commands: plan.commands, rebootsNode: plan.rebootsNode }),
      },
      ownerReferences: [nodeOpOwnerReference(nodeOp)],
    },
    spec: {
      nodeName: node,
      restartPolicy: 'OnFailure',
      hostPID: true,
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 5,
      tolerations: [{ operator: 'Exists' }],
      ...(spec.imagePullSecrets?.length ? { imagePullSecrets: spec.imagePullSecrets } : {}),
      containers: [
        {
          name: REBOOT_CONTAINER,
          image: settings.helperImage,
          command: ['/bin/sh', '-c', rebootScript(plan)],
          env: [{ name: 'JOB_NAME', value: jobName }],
          securityContext: { privileged: true, runAsUser: 0 },
          volumeMounts: [sentinelMount],
        },
      ],
      volumes: [sentinelVolume],
    },
  };
}
