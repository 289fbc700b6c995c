/**
 * KWOK stages for the sandbox's simulated nodes and pods (kwok v0.8.0 has no built-in stages).
 *
 * The knobs, all set on the pod itself so tests and packages can steer single pods:
 *   - env SKYHOOK_SIM_DURATION on any container (Go duration, e.g. "3s"): how long the init
 *     containers run, and then how long the main containers run. Default: the sandbox's
 *     `podDuration`.
 *   - env SKYHOOK_SIM_EXIT_CODE on a container (a non-zero number): that container exits with the
 *     code and the pod fails (init containers after it never start).
 *   - env SKYHOOK_SIM_FAIL_NODE beside it (a node name): the exit code applies only to pods on that
 *     node; elsewhere the container succeeds (one spec, one failing node, as NodeOp tests need).
 *   - the host side of NodeOp interrupts (sentinel, reboot, bootID change) is not a stage: see
 *     simulated-host.ts.
 *   - an image whose registry host ends in `.invalid` (e.g. `registry.invalid/pkg:1.0`): the
 *     container stays in ImagePullBackOff and the pod Pending.
 *   - pods not owned by a Job run until deleted (unless a main container sets the exit code).
 *   - a deleted pod turns Failed (as the kubelet does for killed containers) and then goes away
 *     once its finalizers are removed.
 *   - `kubectl logs` of any container of any simulated pod returns the sandbox's one simulated log
 *     file (SIMULATED_LOG_LINE in CRI format), through a kwok `ClusterLogs` document: the apiserver
 *     asks the node's address and kubelet port, which is kwok's TLS server. There is no real
 *     container, so every pod shows the same text; tools that fetch stage logs can be tested.
 * The selectors are mutually exclusive, so exactly one stage applies to a pod at a time.
 */
import { stringify } from 'yaml';

export const SIM_ENV = {
  duration: 'SKYHOOK_SIM_DURATION',
  exitCode: 'SKYHOOK_SIM_EXIT_CODE',
  failNode: 'SKYHOOK_SIM_FAIL_NODE',
} as const;
export const UNPULLABLE_IMAGE_PATTERN = '^[^/]+[.]invalid/';

type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
interface Expression {
  key: string;
  operator: Operator;
  values?: string[];
}

const allContainers = '.spec.initContainers[]?, .spec.containers[]?';
const envValue = (containers: string, name: string): string =>
  `${containers} | .env[]? | select(.name == "${name}") | .value`;
const unpullable = `${allContainers} | .image | select(test("${UNPULLABLE_IMAGE_PATTERN}"))`;

const is = (key: string, ...values: string[]): Expression => ({ key, operator: 'In', values });
const exists = (key: string): Expression => ({ key, operator: 'Exists' });
const absent = (key: string): Expression => ({ key, operator: 'DoesNotExist' });
const notDeleted = absent('.metadata.deletionTimestamp');
/** Names of the containers that fail on this pod's node: they set an exit code and no other node. */
const failing = (containers: string): string =>
  `.spec.nodeName as $node | ${containers} | select(any(.env[]?; .name == "${SIM_ENV.exitCode}")) | select(all(.env[]?; .name != "${SIM_ENV.failNode}" or .value == $node)) | .name`;
const noFailure = (containers: string): Expression => absent(failing(containers));
const failure = (containers: string): Expression => exists(failing(containers));

/** Template fragments shared by the pod stages. */
const podAddresses = `hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}`;
const condition = (type: string, status: 'True' | 'False'): string =>
  `- type: ${type}\n  status: "${status}"\n  lastTransitionTime: {{ $now | Quote }}`;
const status = (name: string, state: string, ready = false): string =>
  `- name: {{ ${name}.name | Quote }}\n  image: {{ ${name}.image | Quote }}\n  ready: ${ready}\n  restartCount: 0\n  state:\n${state}`;
const waiting = (reason: string, message = ''): string =>
  `    waiting:\n      reason: ${reason}${message ? `\n      message: ${message}` : ''}`;
const running = '    running:\n      startedAt: {{ $now | Quote }}';
const terminated = (exitCode: string, reason: string, message = ''): string =>
  `    terminated:\n      exitCode: ${exitCode}\n      reason: ${reason}\n      startedAt: {{ $now | Quote }}\n      finishedAt: {{ $now | Quote }}${message ? `\n      message: ${message}` : ''}`;
/** Sets $code to the container's SKYHOOK_SIM_EXIT_CODE, or "" when it has none or it fails on another node only. */
const readExitCode = `{{ $code := "" }}{{ $only := "" }}{{ range .env }}{{ if eq .name "${SIM_ENV.exitCode}" }}{{ $code = .value }}{{ end }}{{ if eq .name "${SIM_ENV.failNode}" }}{{ $only = .value }}{{ end }}{{ end }}{{ if and $only (ne $only $.spec.nodeName) }}{{ $code = "" }}{{ end }}`;
const failMessage = `"simulated failure ({{ "${SIM_ENV.exitCode}" }}={{ $code }})"`;

const runningStatus = `{{ $now := Now }}
phase: Running
startTime: {{ $now | Quote }}
${podAddresses}
conditions:
${condition('Initialized', 'True')}
${condition('Ready', 'True')}
${condition('ContainersReady', 'True')}
{{ if .spec.initContainers }}
initContainerStatuses:
{{ range $c := .spec.initContainers }}
${status('$c', terminated('0', 'Completed'), true)}
{{ end }}
{{ end }}
containerStatuses:
{{ range $c := .spec.containers }}
${status('$c', running, true)}
{{ end }}`;

interface StageSpec {
  name: string;
  selector: Expression[];
  delayMs?: number;
  /** jq expression whose value (a Go duration) overrides delayMs. */
  delayFrom?: string;
  statusTemplate?: string;
  delete?: boolean;
  kind?: 'Pod' | 'Node';
}

function stage(spec: StageSpec): Record<string, unknown> {
  const delay =
    spec.delayMs === undefined && !spec.delayFrom
      ? undefined
      : {
          durationMilliseconds: spec.delayMs ?? 0,
          ...(spec.delayFrom ? { durationFrom: { expressionFrom: spec.delayFrom } } : {}),
        };
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name: spec.name },
    spec: {
      resourceRef: { apiGroup: 'v1', kind: spec.kind ?? 'Pod' },
      selector: { matchExpressions: spec.selector },
      ...(delay ? { delay } : {}),
      next: spec.delete ? { delete: true } : { statusTemplate: spec.statusTemplate },
    },
  };
}

export interface StageOptions {
  /** Default time each pod phase (init containers, then main containers) takes. */
  podDurationMs: number;
  /** The file `kubectl logs` returns for every simulated container (see simulatedLogFile); none when absent. */
  logsFile?: string;
  /**
   * The kubelet version simulated nodes report: the API server's own (a kubelet may not be newer,
   * nor more than three minors older), so a node's version always matches the release under test.
   */
  kubeletVersion?: string;
}

/** Reported when the caller does not say which release runs (unit tests). */
const DEFAULT_KUBELET_VERSION = 'v1.37.0';

export function podStages({ podDurationMs }: StageOptions): Record<string, unknown>[] {
  const duration = { delayMs: podDurationMs, delayFrom: `[${envValue(allContainers, SIM_ENV.duration)}] | .[0]` };
  const hasInit = exists('.spec.initContainers[]?.name');
  const fresh = [notDeleted, absent('.status.podIP'), absent(unpullable)];
  return [
    stage({
      name: 'sim-pod-start-init-containers',
      selector: [...fresh, hasInit],
      statusTemplate: `{{ $now := Now }}
phase: Pending
startTime: {{ $now | Quote }}
${podAddresses}
conditions:
${condition('Initialized', 'False')}
${condition('Ready', 'False')}
${condition('ContainersReady', 'False')}
initContainerStatuses:
{{ range $i, $c := .spec.initContainers }}
${status('$c', `{{ if eq $i 0 }}\n${running}\n{{ else }}\n${waiting('PodInitializing')}\n{{ end }}`)}
{{ end }}
containerStatuses:
{{ range $c := .spec.containers }}
${status('$c', waiting('PodInitializing'))}
{{ end }}`,
    }),
    stage({
      name: 'sim-pod-start',
      selector: [...fresh, absent('.spec.initContainers[]?.name')],
      statusTemplate: runningStatus,
    }),
    stage({
      name: 'sim-pod-init-containers-complete',
      // absent(unpullable): a pod stuck pulling an image also has a podIP (its backoff status sets one);
      // without this its init containers would "complete" and the bad image would run.
      selector: [
        notDeleted,
        is('.status.phase', 'Pending'),
        exists('.status.podIP'),
        absent(unpullable),
        hasInit,
        noFailure('.spec.initContainers[]?'),
      ],
      ...duration,
      statusTemplate: runningStatus,
    }),
    stage({
      name: 'sim-pod-init-container-failed',
      selector: [
        notDeleted,
        is('.status.phase', 'Pending'),
        exists('.status.podIP'),
        absent(unpullable),
        failure('.spec.initContainers[]?'),
      ],
      ...duration,
      statusTemplate: `{{ $now := Now }}
phase: Failed
conditions:
${condition('Initialized', 'False')}
${condition('Ready', 'False')}
${condition('ContainersReady', 'False')}
{{ $failed := false }}
initContainerStatuses:
{{ range $c := .spec.initContainers }}
${readExitCode}
{{ if $failed }}
${status('$c', waiting('PodInitializing'))}
{{ else if $code }}
${status('$c', terminated('{{ $code }}', 'Error', failMessage))}
{{ $failed = true }}
{{ else }}
${status('$c', terminated('0', 'Completed'), true)}
{{ end }}
{{ end }}
containerStatuses:
{{ range $c := .spec.containers }}
${status('$c', waiting('PodInitializing'))}
{{ end }}`,
    }),
    stage({
      name: 'sim-pod-complete',
      selector: [
        notDeleted,
        is('.status.phase', 'Running'),
        is('.metadata.ownerReferences[]?.kind', 'Job'),
        noFailure('.spec.containers[]?'),
      ],
      ...duration,
      statusTemplate: `{{ $now := Now }}
phase: Succeeded
conditions:
${condition('Ready', 'False')}
${condition('ContainersReady', 'False')}
containerStatuses:
{{ range $c := .spec.containers }}
${status('$c', terminated('0', 'Completed'))}
{{ end }}`,
    }),
    stage({
      name: 'sim-pod-container-failed',
      selector: [notDeleted, is('.status.phase', 'Running'), failure('.spec.containers[]?')],
      ...duration,
      statusTemplate: `{{ $now := Now }}
phase: Failed
conditions:
${condition('Ready', 'False')}
${condition('ContainersReady', 'False')}
containerStatuses:
{{ range $c := .spec.containers }}
${readExitCode}
{{ if $code }}
${status('$c', terminated('{{ $code }}', 'Error', failMessage))}
{{ else }}
${status('$c', terminated('0', 'Completed'))}
{{ end }}
{{ end }}`,
    }),
    stage({
      name: 'sim-pod-image-pull-backoff',
      selector: [notDeleted, absent('.status.podIP'), exists(unpullable)],
      statusTemplate: `{{ $now := Now }}
phase: Pending
${podAddresses}
conditions:
${condition('Initialized', 'False')}
${condition('Ready', 'False')}
${condition('ContainersReady', 'False')}
{{ if .spec.initContainers }}
initContainerStatuses:
{{ range $c := .spec.initContainers }}
{{ if regexMatch "${UNPULLABLE_IMAGE_PATTERN}" $c.image }}
${status('$c', waiting('ImagePullBackOff', '"Back-off pulling image {{ $c.image }}: simulated registry {{ $c.image }} does not exist"'))}
{{ else }}
${status('$c', waiting('PodInitializing'))}
{{ end }}
{{ end }}
{{ end }}
containerStatuses:
{{ range $c := .spec.containers }}
{{ if regexMatch "${UNPULLABLE_IMAGE_PATTERN}" $c.image }}
${status('$c', waiting('ImagePullBackOff', '"Back-off pulling image {{ $c.image }}: simulated registry {{ $c.image }} does not exist"'))}
{{ else }}
${status('$c', waiting('PodInitializing'))}
{{ end }}
{{ end }}`,
    }),
    stage({
      // The kubelet moves a deleted pod to a terminal phase; the Job controller then drops its finalizer.
      name: 'sim-pod-terminate',
      selector: [
        exists('.metadata.deletionTimestamp'),
        exists('.metadata.finalizers[]?'),
        is('.status.phase', 'Pending', 'Running'),
      ],
      statusTemplate: `{{ $now := Now }}
phase: Failed
reason: Terminated
conditions:
${condition('Ready', 'False')}
${condition('ContainersReady', 'False')}
containerStatuses:
{{ range $c := .spec.containers }}
${status('$c', terminated('137', 'Error'))}
{{ end }}`,
    }),
    stage({
      name: 'sim-pod-delete',
      selector: [exists('.metadata.deletionTimestamp'), absent('.metadata.finalizers[]?')],
      delete: true,
    }),
  ];
}

/** Keeps what the node object says, else a roomy default so scheduling never fails on resources. */
const nodeResources = (field: 'allocatable' | 'capacity'): string => `${field}:
{{ with .status.${field} }}
{{ YAML . 1 }}
{{ else }}
  cpu: "64"
  memory: 256Gi
  pods: "110"
{{ end }}`;

export function nodeStages(kubeletVersion = DEFAULT_KUBELET_VERSION): Record<string, unknown>[] {
  return [
    stage({
      name: 'sim-node-initialize',
      kind: 'Node',
      selector: [
        { key: '.status.conditions[]? | select(.type == "Ready") | .status', operator: 'NotIn', values: ['True'] },
      ],
      statusTemplate: `{{ $now := Now }}
conditions:
{{ range NodeConditions }}
- type: {{ .type | Quote }}
  status: {{ .status | Quote }}
  reason: {{ .reason | Quote }}
  message: {{ .message | Quote }}
  lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
addresses:
- type: InternalIP
  address: {{ NodeIP | Quote }}
- type: Hostname
  address: {{ .metadata.name | Quote }}
{{ with NodePort }}
daemonEndpoints:
  kubeletEndpoint:
    Port: {{ . }}
{{ end }}
${nodeResources('allocatable')}
${nodeResources('capacity')}
{{ $info := or .status.nodeInfo dict }}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  bootID: {{ or $info.bootID (printf "boot-%s" .metadata.uid) | Quote }}
  machineID: {{ or $info.machineID .metadata.uid | Quote }}
  systemUUID: {{ or $info.systemUUID .metadata.uid | Quote }}
  kernelVersion: {{ or $info.kernelVersion "6.1.0-sim" | Quote }}
  osImage: {{ or $info.osImage "Simulated Linux" | Quote }}
  containerRuntimeVersion: {{ or $info.containerRuntimeVersion "containerd://sim" | Quote }}
  kubeletVersion: {{ or $info.kubeletVersion ${JSON.stringify(kubeletVersion)} | Quote }}
  kubeProxyVersion: {{ or $info.kubeProxyVersion ${JSON.stringify(kubeletVersion)} | Quote }}
phase: Running`,
    }),
  ];
}

/** What every simulated container "printed". */
export const SIMULATED_LOG_LINE =
  'simulated container on a kwok node: no real process ran, so this line is its whole log';

/** The log file in the CRI format kwok reads (`<RFC3339Nano> <stream> F <text>`). */
export function simulatedLogFile(): string {
  return `2025-01-01T00:00:00.000000000Z stdout F ${SIMULATED_LOG_LINE}\n`;
}

/** One rule for every pod in every namespace; a log entry without containers applies to all of them. */
export function clusterLogs(logsFile: string): Record<string, unknown> {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'ClusterLogs',
    metadata: { name: 'sim-logs' },
    spec: { logs: [{ logsFile }] },
  };
}

/** The multi-document YAML passed to `kwok --config`. */
export function kwokConfigYaml(options: StageOptions): string {
  const logs = options.logsFile === undefined ? [] : [clusterLogs(options.logsFile)];
  return [...nodeStages(options.kubeletVersion), ...podStages(options), ...logs]
    .map((doc) => stringify(doc, { lineWidth: 0 }))
    .join('---\n');
}
