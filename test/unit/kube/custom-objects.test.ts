/**
 * CustomObjects<T> forwards each method to exactly one CustomObjectsApi call, namespaced or
 * cluster-wide as constructed, with the kind's coordinates, merge patches with the merge-patch
 * Content-Type, and a delete's propagationPolicy only when one is given.
 */
import { describe, expect, it } from '@jest/globals';
import type { CustomObjectsApi, KubernetesObject } from '@kubernetes/client-node';
import { MERGE_PATCH } from '../../../src/kube/client.js';
import { CustomObjects } from '../../../src/kube/custom-objects.js';

interface Call {
  method: string;
  params: Record<string, unknown>;
  options: unknown;
}

/** A CustomObjectsApi that records every call and answers `answer`. */
function fakeApi(answer: unknown): { api: CustomObjectsApi; calls: Call[] } {
  const calls: Call[] = [];
  const api = new Proxy(
    {},
    {
      get:
        (_target, method) =>
        (params: Record<string, unknown>, options?: unknown): Promise<unknown> => {
          calls.push({ method: String(method), params, options });
          return Promise.resolve(answer);
        },
    },
  );
  return { api: api as CustomObjectsApi, calls };
}

const OPS = { group: 'skyhook.nvidia.com', version: 'v1alpha1', plural: 'nodeops' };
const op: KubernetesObject = { apiVersion: 'skyhook.nvidia.com/v1alpha1', kind: 'NodeOp', metadata: { name: 'op-1' } };

describe('CustomObjects, namespaced', () => {
  it('gets, lists, creates and replaces the status in its namespace', async () => {
    const { api, calls } = fakeApi({ ...op, items: [op] });
    const ops = new CustomObjects<KubernetesObject>(api, OPS, 'skyhook');
    expect((await ops.get('op-1')).metadata?.name).toBe('op-1');
    expect(await ops.list()).toEqual([op]);
    await ops.create(op);
    await ops.replaceStatus(op);
    expect(calls.map((c) => [c.method, c.params])).toEqual([
      ['getNamespacedCustomObject', { ...OPS, namespace: 'skyhook', name: 'op-1' }],
      ['listNamespacedCustomObject', { ...OPS, namespace: 'skyhook' }],
      ['createNamespacedCustomObject', { ...OPS, namespace: 'skyhook', body: op }],
      ['replaceNamespacedCustomObjectStatus', { ...OPS, namespace: 'skyhook', name: 'op-1', body: op }],
    ]);
  });

  it('sends merge patches with the merge-patch Content-Type', async () => {
    const { api, calls } = fakeApi(op);
    const ops = new CustomObjects<KubernetesObject>(api, OPS, 'skyhook');
    await ops.mergePatch('op-1', { metadata: { annotations: { a: null } } });
    await ops.patchStatus('op-1', { phase: 'Running' });
    expect(calls).toEqual([
      {
        method: 'patchNamespacedCustomObject',
        params: { ...OPS, namespace: 'skyhook', name: 'op-1', body: { metadata: { annotations: { a: null } } } },
        options: MERGE_PATCH,
      },
      {
        method: 'patchNamespacedCustomObjectStatus',
        params: { ...OPS, namespace: 'skyhook', name: 'op-1', body: { status: { phase: 'Running' } } },
        options: MERGE_PATCH,
      },
    ]);
  });

  it('deletes, with a propagationPolicy only when asked', async () => {
    const { api, calls } = fakeApi({});
    const ops = new CustomObjects<KubernetesObject>(api, OPS, 'skyhook');
    await ops.delete('op-1', { propagationPolicy: 'Background' });
    await ops.delete('op-2');
    expect(calls.map((c) => [c.method, c.params])).toEqual([
      ['deleteNamespacedCustomObject', { ...OPS, namespace: 'skyhook', name: 'op-1', propagationPolicy: 'Background' }],
      ['deleteNamespacedCustomObject', { ...OPS, namespace: 'skyhook', name: 'op-2' }],
    ]);
  });
});

describe('CustomObjects, cluster-scoped', () => {
  it('uses the cluster calls, without a namespace', async () => {
    const SKYHOOKS = { ...OPS, plural: 'skyhooks' };
    const scr: KubernetesObject = { metadata: { name: 'demo' } };
    const { api, calls } = fakeApi({ ...scr, items: [] });
    const skyhooks = new CustomObjects<KubernetesObject>(api, SKYHOOKS);
    await skyhooks.get('demo');
    await skyhooks.list();
    await skyhooks.create(scr);
    await skyhooks.mergePatch('demo', { metadata: { finalizers: [] } });
    await skyhooks.patchStatus('demo', { status: 'complete' });
    await skyhooks.replaceStatus(scr);
    await skyhooks.delete('demo');
    expect(calls.map((c) => [c.method, c.params])).toEqual([
      ['getClusterCustomObject', { ...SKYHOOKS, name: 'demo' }],
      ['listClusterCustomObject', SKYHOOKS],
      ['createClusterCustomObject', { ...SKYHOOKS, body: scr }],
      ['patchClusterCustomObject', { ...SKYHOOKS, name: 'demo', body: { metadata: { finalizers: [] } } }],
      ['patchClusterCustomObjectStatus', { ...SKYHOOKS, name: 'demo', body: { status: { status: 'complete' } } }],
      ['replaceClusterCustomObjectStatus', { ...SKYHOOKS, name: 'demo', body: scr }],
      ['deleteClusterCustomObject', { ...SKYHOOKS, name: 'demo' }],
    ]);
  });
});
