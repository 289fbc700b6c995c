/**
 * The drain options' exemptions (exemptNamespaces, exemptCordonTolerating), which a Skyhook stage's
 * NodeOp sets to drain as upstream Skyhook does, while a plain NodeOp drains as kubectl does.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Pod, V1Toleration } from '@kubernetes/client-node';
import { planDrain, podRef, toleratesCordon } from '../../../src/jobs/drain-plan.js';

const pod = (namespace: string, name: string, tolerations: V1Toleration[] = []): V1Pod => ({
  metadata: {
    name,
    namespace,
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'o', uid: 'u', controller: true }],
  },
  spec: { containers: [], tolerations },
  status: { phase: 'Running' },
});
const cordonToleration = { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' };
const pods = [
  pod('kube-system', 'dns'),
  pod('apps', 'web'),
  pod('apps', 'tolerant', [cordonToleration]),
  pod('apps', 'tolerates-all', [{ operator: 'Exists' }]),
  pod('apps', 'other-taint', [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }]),
];
const never = () => false;

describe('drain exemptions', () => {
  it('a plain drain evicts every pod its options allow (kubectl)', () => {
    expect(planDrain(pods, {}, never).evict.map(podRef)).toEqual(pods.map(podRef));
  });

  it('exempts the listed namespaces and the pods that tolerate the cordon when asked', () => {
    expect(planDrain(pods, { exemptNamespaces: ['kube-system'] }, never).evict.map(podRef)).toEqual([
      'apps/web',
      'apps/tolerant',
      'apps/tolerates-all',
      'apps/other-taint',
    ]);
    expect(
      planDrain(pods, { exemptNamespaces: ['kube-system'], exemptCordonTolerating: true }, never).evict.map(podRef),
    ).toEqual(['apps/web', 'apps/other-taint']);
  });

  it('matches tolerations as Kubernetes does', () => {
    expect(toleratesCordon(pod('a', 'p', [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists' }]))).toBe(
      true,
    );
    expect(toleratesCordon(pod('a', 'p', [{ key: '', operator: 'Exists', effect: 'NoSchedule' }]))).toBe(true);
    expect(toleratesCordon(pod('a', 'p', [{ key: '', operator: 'Equal', effect: 'NoSchedule' }]))).toBe(false);
    expect(toleratesCordon(pod('a', 'p', [{ ...cordonToleration, effect: 'NoExecute' }]))).toBe(false);
    expect(
      toleratesCordon(
        pod('a', 'p', [
          { key: 'node.kubernetes.io/unschedulable', operator: 'Equal', value: 'x', effect: 'NoSchedule' },
        ]),
      ),
    ).toBe(false);
  });
});
