/**
 * What real-maintenance.test.ts sets up on the real-node harness: the operator's maintenance
 * controller in this process, and on the real nodes the objects a cluster would run: the daemon
 * from config/maintenance as it is (its own ServiceAccount and RBAC, so the API server enforces the
 * least privilege), patched only where the sandbox differs from a cluster (no Service network:
 * hostNetwork and the API relay on 127.0.0.1:6443; no ServiceAccount admission plugin: the token
 * volume it would add; the image built for the nodes), and the Kustodian-style example script
 * (docs/examples/maintenance.sh) run unchanged on each node's host by a DaemonSet that enters it.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { V1DaemonSet, V1Pod } from '@kubernetes/client-node';
import { SANDBOX_NAMES } from '../../src/api/names.js';
import { maintenanceControllerFactory } from '../../src/controllers/maintenance/controller.js';
import { startManager, type Manager } from '../../src/kube/manager.js';
import { NODE_API_SERVER } from '../../src/sandbox/real-node/node-files.js';
import { kubectlOk, NAMESPACE, REPO_ROOT, type RealHarness } from './real-harness.js';
import { waitCrdsEstablished } from '../../src/sandbox/crds-established.js';
import { e2eOperatorLogger } from './e2e-logger.js';

/** Where the example script is put on each node's host. */
export const SCRIPT_ON_HOST = '/usr/local/sbin/maintenance-example.sh';
export const SCRIPT_DAEMONSET = 'maintenance-script';
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export async function startMaintenanceController(h: RealHarness): Promise<Manager> {
  await waitCrdsEstablished(h.cp, ['crd/maintenancepolicies.skyhook.nvidia.com']);
  return startManager({
    kc: h.cp.kubeConfig,
    logger: e2eOperatorLogger(),
    namespace: NAMESPACE,
    identity: 'real-maintenance-e2e',
    leaderElect: false,
    leaseName: 'real-maintenance-e2e',
    health: { host: '127.0.0.1', port: 0 },
    metrics: { host: '127.0.0.1', port: 0 },
    controllers: [maintenanceControllerFactory({ settings: { blockerRecheckMs: 2_000, resyncMs: 5_000 } })],
    drainDeadlineMs: 5_000,
  });
}

type Doc = { kind: string; spec?: V1DaemonSet['spec'] };

/** config/maintenance, with the sandbox's differences from a cluster patched into the DaemonSet. */
export async function deployDaemon(h: RealHarness): Promise<void> {
  const docs = parseAllDocuments(await kubectlOk(h, ['kustomize', join(REPO_ROOT, 'config/maintenance')])).map(
    (d) => d.toJSON() as Doc,
  );
  const api = new URL(NODE_API_SERVER);
  for (const doc of docs.filter((d) => d.kind === 'DaemonSet')) {
    const pod = doc.spec!.template.spec!;
    const container = pod.containers[0]!;
    pod.hostNetwork = true;
    pod.dnsPolicy = 'ClusterFirstWithHostNet';
    pod.nodeSelector = { ...pod.nodeSelector, [SANDBOX_NAMES.nodeKindLabel]: 'real' };
    container.image = h.images.agentImage;
    container.args = [...(container.args ?? []), '--period', '1s', '--heartbeat', '2s'];
    container.env = [
      ...(container.env ?? []),
      { name: 'KUBERNETES_SERVICE_HOST', value: api.hostname },
      { name: 'KUBERNETES_SERVICE_PORT', value: api.port },
    ];
    container.volumeMounts = [
      ...(container.volumeMounts ?? []),
      { name: 'kube-api-access', mountPath: SERVICE_ACCOUNT_DIR, readOnly: true },
    ];
    pod.volumes = [
      ...(pod.volumes ?? []),
      {
        name: 'kube-api-access',
        projected: {
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
          ],
        },
      },
    ];
  }
  await kubectlOk(h, ['apply', '--server-side', '-f', '-'], docs.map((d) => stringify(d)).join('---\n'));
}

/** Puts docs/examples/maintenance.sh, byte for byte, on each node's host. */
export function installScript(h: RealHarness, nodes: string[]): void {
  for (const node of nodes) {
    const target = join(h.node(node).rootDir, SCRIPT_ON_HOST);
    mkdirSync(join(target, '..'), { recursive: true });
    copyFileSync(join(REPO_ROOT, 'docs/examples/maintenance.sh'), target);
  }
}

/**
 * A DaemonSet that runs the script once on each real node's host (nsenter into PID 1, as a person's
 * cron job would run there), then idles: a DaemonSet pod, so the drain it waits for leaves it alone.
 */
export async function runScriptEverywhere(h: RealHarness, workSeconds: number): Promise<void> {
  const run = `nsenter -t 1 -m -u -i -n -p -- env MAINTENANCE_WORK_SECONDS=${workSeconds} /bin/sh ${SCRIPT_ON_HOST}; echo "script exited $?"; exec sleep 100000`;
  const ds: V1DaemonSet = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: SCRIPT_DAEMONSET, namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: SCRIPT_DAEMONSET } },
      template: {
        metadata: { labels: { app: SCRIPT_DAEMONSET } },
        spec: {
          hostPID: true,
          tolerations: [{ operator: 'Exists' }],
          nodeSelector: { [SANDBOX_NAMES.nodeKindLabel]: 'real' },
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'script',
              image: h.images.sentinelImage,
              command: ['/bin/sh', '-c', run],
              securityContext: { privileged: true },
            },
          ],
        },
      },
    },
  };
  await kubectlOk(h, ['apply', '-f', '-'], JSON.stringify(ds));
}

/** A bare pod pinned to `node` (the drain's victim, or a reboot blocker). */
export function pinnedPod(h: RealHarness, name: string, node: string, labels: Record<string, string> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'pause', image: h.images.pauseImage }],
    },
  };
}

/** The maintenance daemon's pod on `node`. */
export async function daemonPod(h: RealHarness, node: string): Promise<string> {
  const pods = await h.core.listNamespacedPod({
    namespace: NAMESPACE,
    labelSelector: 'app.kubernetes.io/name=skyhook-maintenance',
    fieldSelector: `spec.nodeName=${node}`,
  });
  const running = pods.items.find((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  if (!running?.metadata?.name) throw new Error(`no running maintenance daemon on ${node}`);
  return running.metadata.name;
}

/** Runs `command` on `node`'s host through its daemon pod (what `kubectl exec` + nsenter gives an admin). */
export async function onHost(h: RealHarness, node: string, command: string[]): Promise<{ code: number; out: string }> {
  const pod = await daemonPod(h, node);
  const result = await h.cp.kubectl(['-n', NAMESPACE, 'exec', pod, '--', 'nsenter', '-t', '1', '-m', '--', ...command]);
  return { code: result.code, out: `${result.stdout}${result.stderr}` };
}
