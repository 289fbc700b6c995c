/**
 * The Helm install path on the project's local control plane, end to end: `helm install skyhook
 * ./chart -n skyhook --create-namespace` brings up the operator *as a Deployment* (its pods in real
 * containers on 2 real nodes, from the skyhook image `npm run images` builds; nothing runs the
 * operator in this process) and it completes the upstream README demo unchanged; `helm upgrade` with
 * a changed value rolls the Deployment; `helm uninstall` removes the operator and keeps the CRDs
 * (and the Skyhooks); `kubectl apply -k config/default` then still installs.
 *
 * What differs from a real cluster is given as values, not chart changes: the sandbox's real nodes
 * reach the API server only through a relay on 127.0.0.1:6443 inside each node's network namespace
 * (src/sandbox/real-node/api-relay.ts) and have no Service network, so the operator pods run with
 * hostNetwork and KUBERNETES_SERVICE_HOST/PORT pointing at that relay; the sandbox's API server runs
 * without the ServiceAccount admission plugin (src/sandbox/control-plane.ts), so the values also
 * mount the service-account token volume that plugin would add (in-cluster config then works as in
 * any pod); a nodeSelector keeps the pods on real nodes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { SANDBOX_NAMES } from '../../src/api/names.js';
import { startControlPlane, type ControlPlane } from '../../src/sandbox/control-plane.js';
import { waitCrdsEstablished } from '../../src/sandbox/crds-established.js';
import { ensureImages } from '../../src/sandbox/images/ensure-images.js';
import { startRealNodes, type RealNodeFleet } from '../../src/sandbox/real-node/real-nodes.js';
import { NODE_API_SERVER } from '../../src/sandbox/real-node/node-files.js';
import { CHART_DIR, helmOk } from '../helm-binary.js';
import { LEASE_NAME } from '../../src/cli/operator.js';
import { acquireSerialLock } from './real-harness.js';
import { waitForValue } from './eventually.js';
import { DEMO_LABEL, REPO_ROOT, waitForSkyhook } from './skyhook-harness.js';

const README_DEMO = resolve(REPO_ROOT, '../shared/examples/skyhook-readme-demo.yaml');
const NS = 'skyhook';
/** Where in-cluster clients read the token, CA and namespace (what the ServiceAccount admission plugin mounts). */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const CRDS = ['skyhooks.skyhook.nvidia.com', 'deploymentpolicies.skyhook.nvidia.com', 'nodeops.skyhook.nvidia.com'];

let cp: ControlPlane;
let fleet: RealNodeFleet | undefined;
let release: (() => void) | undefined;
let sandboxValues: string;

async function kubectl(args: string[]): Promise<string> {
  const result = await cp.kubectl(args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

const helm = (args: string[]): Promise<string> => helmOk(args, { kubeconfig: cp.kubeconfigPath });

async function operatorDeployment(): Promise<V1Deployment> {
  return JSON.parse(await kubectl(['-n', NS, 'get', 'deployment', 'skyhook-operator', '-o', 'json'])) as V1Deployment;
}

async function operatorPods(): Promise<V1Pod[]> {
  const list = JSON.parse(
    await kubectl(['-n', NS, 'get', 'pods', '-l', 'app.kubernetes.io/component=operator', '-o', 'json']),
  ) as { items: V1Pod[] };
  return list.items;
}

async function rolledOut(): Promise<void> {
  await kubectl(['-n', NS, 'rollout', 'status', 'deployment/skyhook-operator', '--timeout=240s']);
}

beforeAll(async () => {
  release = await acquireSerialLock();
  const started = Date.now();
  const images = await ensureImages();
  const imagesMs = Date.now() - started;
  cp = await startControlPlane({ nodes: [] });
  fleet = await startRealNodes(cp, { count: 2, images, labels: DEMO_LABEL });
  console.log(
    `helm e2e: images ${(imagesMs / 1000).toFixed(1)} s, control plane + 2 real nodes ${((Date.now() - started - imagesMs) / 1000).toFixed(1)} s`,
  );
  const api = new URL(NODE_API_SERVER);
  sandboxValues = join(cp.runDir, 'sandbox-values.yaml');
  writeFileSync(
    sandboxValues,
    [
      'hostNetwork: true',
      // Host ports: a surge pod would find 8080/8081 taken on both nodes, so replace one at a time.
      'strategy: { type: RollingUpdate, rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } }',
      `nodeSelector: { ${SANDBOX_NAMES.nodeKindLabel}: real }`,
      'extraEnv:',
      `  - { name: KUBERNETES_SERVICE_HOST, value: "${api.hostname}" }`,
      `  - { name: KUBERNETES_SERVICE_PORT, value: "${api.port}" }`,
      'extraVolumeMounts:',
      `  - { name: kube-api-access, mountPath: ${SERVICE_ACCOUNT_DIR}, readOnly: true }`,
      'extraVolumes:',
      '  - name: kube-api-access',
      '    projected:',
      '      defaultMode: 420',
      '      sources:',
      '        - serviceAccountToken: { path: token, expirationSeconds: 3607 }',
      '        - configMap: { name: kube-root-ca.crt, items: [{ key: ca.crt, path: ca.crt }] }',
      '        - downwardAPI: { items: [{ path: namespace, fieldRef: { fieldPath: metadata.namespace } }] }',
      '',
    ].join('\n'),
  );
}, 900_000);

afterAll(async () => {
  await fleet?.stop();
  await cp?.stop();
  release?.();
}, 180_000);

describe('helm install / upgrade / uninstall on the local control plane', () => {
  it('helm install brings up the operator Deployment, which completes the upstream README demo', async () => {
    const started = Date.now();
    await helm(['install', 'skyhook', CHART_DIR, '-n', NS, '--create-namespace', '-f', sandboxValues]);
    await waitCrdsEstablished(
      cp,
      CRDS.map((c) => `crd/${c}`),
    );
    await rolledOut();
    const pods = await operatorPods();
    expect(pods).toHaveLength(2);
    // Spread by the anti-affinity of config/manager: one replica per node.
    expect(new Set(pods.map((p) => p.spec?.nodeName))).toEqual(new Set(['real-0', 'real-1']));
    console.log(`helm install → operator rolled out in ${Date.now() - started} ms`);

    const demoStarted = Date.now();
    await kubectl(['apply', '-f', README_DEMO]);
    const done = await waitForSkyhook({ cp }, 'demo', (scr) => scr.status?.status === 'complete', 240_000);
    expect(done.status).toMatchObject({ status: 'complete', completeNodes: '2/2', packageList: 'tuning:1.1.0' });
    for (const node of fleet!.nodes) {
      expect(readFileSync(join(node.rootDir, 'skyhook-hello-world'), 'utf8')).toBe('hello world\na config is run\n');
    }
    console.log(`README demo complete under the Helm-installed operator in ${Date.now() - demoStarted} ms`);
    // The leader is one of the Deployment's pods: nothing else runs an operator here.
    const lease = JSON.parse(await kubectl(['-n', NS, 'get', 'lease', LEASE_NAME, '-o', 'json'])) as {
      spec: { holderIdentity: string };
    };
    expect(pods.map((p) => p.metadata?.name)).toContain(lease.spec.holderIdentity.split('_')[0]);
  }, 600_000);

  it('helm upgrade with a changed value rolls the Deployment', async () => {
    const before = await operatorDeployment();
    const oldPods = new Set((await operatorPods()).map((p) => p.metadata?.name));
    await helm(['upgrade', 'skyhook', CHART_DIR, '-n', NS, '--reuse-values', '--set', 'settings.LOG_LEVEL=debug']);
    await rolledOut();
    const after = await operatorDeployment();
    expect(after.metadata?.generation).toBeGreaterThan(before.metadata?.generation ?? 0);
    const env = after.spec?.template.spec?.containers[0]?.env ?? [];
    expect(env.find((e) => e.name === 'LOG_LEVEL')?.value).toBe('debug');
    const pods = await waitForValue(
      'the old operator pods to go',
      async () => {
        const now = await operatorPods();
        return now.length === 2 && now.every((p) => !oldPods.has(p.metadata?.name)) ? now : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    for (const pod of pods) {
      expect(pod.spec?.containers[0]?.env?.find((e) => e.name === 'LOG_LEVEL')?.value).toBe('debug');
      expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
    expect(await helm(['history', 'skyhook', '-n', NS])).toMatch(/\n2\s.*deployed/);
  }, 400_000);

  it('helm uninstall removes the operator and keeps the CRDs and the Skyhooks', async () => {
    await helm(['uninstall', 'skyhook', '-n', NS]);
    for (const kind of ['deployment', 'serviceaccount', 'service', 'poddisruptionbudget', 'role', 'rolebinding'])
      expect(
        (await kubectl(['-n', NS, 'get', kind, '-l', 'app.kubernetes.io/name=skyhook-operator', '-o', 'name'])).trim(),
      ).toBe('');
    for (const kind of ['clusterrole', 'clusterrolebinding'])
      expect((await cp.kubectl(['get', kind, 'skyhook-operator'])).code).not.toBe(0);
    await waitForValue(
      'the operator pods to go',
      async () => ((await operatorPods()).length === 0 ? true : undefined),
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const crds = (await kubectl(['get', 'crd', '-o', 'name'])).trim().split('\n');
    for (const crd of CRDS) expect(crds).toContain(`customresourcedefinition.apiextensions.k8s.io/${crd}`);
    expect(await kubectl(['get', 'skyhook', 'demo', '-o', 'name'])).toMatch(/demo/);
  }, 200_000);

  it('kubectl apply -k config/default still installs over the kept CRDs', async () => {
    await kubectl(['apply', '--server-side', '-k', join(REPO_ROOT, 'config/default')]);
    const deployment = await operatorDeployment();
    expect(deployment.spec?.replicas).toBe(2);
    expect(deployment.metadata?.labels?.['app.kubernetes.io/managed-by']).toBeUndefined();
  }, 120_000);
});
