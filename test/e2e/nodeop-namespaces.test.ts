/**
 * No privileged deputy: a NodeOp's Job runs privileged with the host's root mounted, and the
 * operator (not the user) creates it, so the operator runs NodeOps only in its own namespace and the
 * ones NODEOP_NAMESPACES lists. A user whose only right is to create NodeOps in another namespace
 * gets no pod onto any node: the NodeOp is marked Ignored (condition and Warning Event, naming the
 * namespaces that run and the fix) and no Job or pod appears; once an administrator lists the
 * namespace, the same NodeOp runs.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { NODEOP_CONDITIONS, NODEOP_EVENT_REASONS, NODEOP_NAMES } from '../../src/api/names.js';
import type { NodeOp } from '../../src/api/nodeop.js';
import { REPO_ROOT } from '../helm-binary.js';
import { eventually } from './eventually.js';
import { startNodeOpHarness, waitForNodeOp, type NodeOpHarness } from './nodeop-harness.js';

const TENANT = 'tenant';
const USER = 'alice';
const NODE = 'ns-1';

let h: NodeOpHarness;

async function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return h.cp.kubectl(args, input === undefined ? undefined : { input });
}

function nodeOp(namespace: string, name: string): string {
  return stringify({
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'NodeOp',
    metadata: { name, namespace },
    spec: { targetNodes: [NODE], image: 'busybox:1.37', command: ['/bin/sh', '-c', 'chroot /host id'] },
  });
}

const ignored = (op: NodeOp) =>
  op.status?.conditions?.find((c) => c.type === NODEOP_CONDITIONS.ignored && c.status === 'True');

beforeAll(async () => {
  // The harness's operator runs in namespace `default`; here with no other namespace listed.
  h = await startNodeOpHarness([{ name: NODE }], { settings: { extraNamespaces: [] } });
  for (const args of [
    ['create', 'namespace', TENANT],
    [
      '-n',
      TENANT,
      'create',
      'role',
      'nodeop-editor',
      '--verb=create,get,list,watch',
      '--resource=nodeops.skyhook.nvidia.com',
    ],
    ['-n', TENANT, 'create', 'rolebinding', 'alice-nodeops', '--role=nodeop-editor', `--user=${USER}`],
  ]) {
    const result = await kubectl(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  }
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

describe('NodeOps outside the namespaces the operator runs', () => {
  it('a user with NodeOp rights only in another namespace creates one, and it never gets a pod onto a node', async () => {
    const created = await kubectl([`--as=${USER}`, 'create', '-f', '-'], nodeOp(TENANT, 'root-me'));
    expect(created).toMatchObject({ code: 0 });
    const op = await waitForNodeOp(h, TENANT, 'root-me', (o) => ignored(o) !== undefined);
    const condition = ignored(op)!;
    expect(condition.reason).toBe(NODEOP_EVENT_REASONS.namespaceNotWatched);
    expect(condition.message).toContain(
      "this operator runs NodeOps only in: default; this one, in namespace 'tenant', never runs",
    );
    expect(condition.message).toContain('NODEOP_NAMESPACES');
    // The reconcile that wrote the condition is the one that would have created the Job: it did not.
    expect((await h.batch.listNamespacedJob({ namespace: TENANT })).items).toEqual([]);
    const pods = await h.core.listPodForAllNamespaces({ labelSelector: `${NODEOP_NAMES.nodeOpLabel}=root-me` });
    expect(pods.items).toEqual([]);
    expect(op.status?.nodeStatuses ?? {}).toEqual({});
    const events = await eventually(
      async () => (await h.core.listNamespacedEvent({ namespace: TENANT })).items,
      (items) => items.some((e) => e.reason === NODEOP_EVENT_REASONS.namespaceNotWatched),
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(events.find((e) => e.reason === NODEOP_EVENT_REASONS.namespaceNotWatched)?.type).toBe('Warning');
  });

  it('the same user cannot create a NodeOp where the operator runs them, nor a pod anywhere', async () => {
    const inOperatorNamespace = await kubectl([`--as=${USER}`, 'create', '-f', '-'], nodeOp('default', 'sneak'));
    expect(inOperatorNamespace.code).not.toBe(0);
    expect(inOperatorNamespace.stderr).toContain('forbidden');
    const pod = await kubectl([`--as=${USER}`, '-n', TENANT, 'run', 'direct', '--image=busybox:1.37']);
    expect(pod.code).not.toBe(0);
    expect(pod.stderr).toContain('forbidden');
  });

  it('runs once an administrator lists the namespace (the gate, not something else, held it)', async () => {
    await h.restartOperator({ extraNamespaces: [TENANT] });
    const done = await waitForNodeOp(h, TENANT, 'root-me', (o) => o.status?.phase === 'Completed', 90_000);
    expect(ignored(done)).toBeUndefined();
    expect((await h.batch.listNamespacedJob({ namespace: TENANT })).items).toHaveLength(1);
  });
});

describe('the viewer and editor roles (config/rbac/user-roles.yaml)', () => {
  /** `kubectl auth can-i` as `user`: in TENANT for NodeOps, cluster-wide for the cluster-scoped kinds. */
  const can = async (user: string, verb: string, kind: string): Promise<boolean> => {
    const where = kind === 'nodeops' ? ['-n', TENANT] : [];
    const result = await kubectl([`--as=${user}`, ...where, 'auth', 'can-i', verb, `${kind}.skyhook.nvidia.com`]);
    return result.stdout.trim() === 'yes';
  };
  const KINDS = ['skyhooks', 'deploymentpolicies', 'disruptionbudgets', 'maintenancepolicies', 'nodeops'];

  beforeAll(async () => {
    // Every kind's CRD (the harness installs only NodeOp's), so kubectl resolves each resource.
    for (const args of [
      ['apply', '--server-side', '-k', join(REPO_ROOT, 'config/crd')],
      ['wait', '--for=condition=Established', '--timeout=60s', ...KINDS.map((k) => `crd/${k}.skyhook.nvidia.com`)],
      ['apply', '-f', join(REPO_ROOT, 'config/rbac/user-roles.yaml')],
    ]) {
      const result = await kubectl(args);
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    }
    // Cluster-wide bindings of Kubernetes' own roles: what skyhook-viewer/editor add to them.
    for (const role of ['view', 'edit', 'admin']) {
      const bound = await kubectl([
        'create',
        'clusterrolebinding',
        `${role}-user`,
        `--clusterrole=${role}`,
        `--user=${role}-user`,
      ]);
      if (bound.code !== 0) throw new Error(bound.stderr);
    }
    // The aggregation controller folds the roles into view/edit/admin shortly after the apply.
    for (const [user, verb] of [
      ['view-user', 'list'],
      ['admin-user', 'create'],
    ] as const)
      await eventually(
        () => can(user, verb, 'nodeops'),
        (yes) => yes,
        { timeoutMs: 30_000, intervalMs: 250 },
      );
  }, 60_000);

  it('view reads every kind and writes none', async () => {
    for (const kind of KINDS) expect({ kind, get: await can('view-user', 'get', kind) }).toEqual({ kind, get: true });
    for (const kind of KINDS)
      expect({ kind, create: await can('view-user', 'create', kind) }).toEqual({ kind, create: false });
  });

  it('edit reads every kind but creates none: root on nodes is not an editor right', async () => {
    for (const kind of KINDS)
      expect({ kind, list: await can('edit-user', 'list', kind) }).toEqual({ kind, list: true });
    for (const kind of KINDS)
      expect({ kind, create: await can('edit-user', 'create', kind) }).toEqual({ kind, create: false });
  });

  it('admin (skyhook-editor) creates, changes and deletes every kind', async () => {
    for (const verb of ['create', 'patch', 'delete'])
      for (const kind of KINDS)
        expect({ kind, verb, allowed: await can('admin-user', verb, kind) }).toEqual({ kind, verb, allowed: true });
  });
});
