/**
 * kubectl wait on a CRD the API server has not written a status for fails at once (CI saw it on
 * Kubernetes 1.34): that answer is asked again; any other failure is reported as it is.
 */
import { describe, expect, it } from '@jest/globals';
import type { KubectlResult } from '../../../src/sandbox/control-plane.js';
import { waitCrdsEstablished } from '../../../src/sandbox/crds-established.js';

const EARLY_READ = 'error: .status.conditions accessor error: <nil> is of the type <nil>, expected []interface{}';

function kubectlAnswering(...answers: KubectlResult[]): { kubectl: () => Promise<KubectlResult>; calls: () => number } {
  let calls = 0;
  return {
    kubectl: async () => answers[Math.min(calls++, answers.length - 1)]!,
    calls: () => calls,
  };
}

describe('waitCrdsEstablished', () => {
  it('asks again while the CRD has no status yet, and returns once kubectl says established', async () => {
    const cp = kubectlAnswering(
      { code: 1, stdout: '', stderr: EARLY_READ },
      { code: 1, stdout: '', stderr: EARLY_READ },
      { code: 0, stdout: 'condition met', stderr: '' },
    );
    await waitCrdsEstablished(cp, ['crd/nodeops.skyhook.nvidia.com']);
    expect(cp.calls()).toBe(3);
  });

  it('reports any other failure at once, naming the CRDs', async () => {
    const cp = kubectlAnswering({ code: 1, stdout: '', stderr: 'error: timed out waiting for the condition' });
    await expect(waitCrdsEstablished(cp, ['crd/skyhooks.skyhook.nvidia.com'])).rejects.toThrow(
      /crd\/skyhooks\.skyhook\.nvidia\.com.*timed out/,
    );
    expect(cp.calls()).toBe(1);
  });
});
