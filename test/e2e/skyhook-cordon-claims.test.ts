/**
 * Cordon ownership per SCR through the real operator: a node two SCRs cordoned for their
 * interrupts stays cordoned until both are done with it. The first SCR cordons the node and is
 * held there by a podNonInterruptLabels pod, then disabled (a disabled SCR holds no later one back,
 * but keeps its claim); the second shares the cordon, drains, reboots and completes, and the node
 * stays cordoned under the first's claim until the first, enabled again, completes too.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  KINDS,
  nodeAnnotations,
  SKYHOOK_ANNOTATIONS,
  SKYHOOK_CONDITIONS,
} from '../../src/api/names.js';
import type { Package } from '../../src/api/skyhook.js';
import { mergePatchCustomObject } from '../../src/kube/client.js';
import { waitForList } from '../../src/kube/wait.js';
import type { SimulatedHost } from '../../src/sandbox/simulated-host.js';
import { createSkyhook, startSkyhookHarness, waitForSkyhook, type SkyhookHarness } from './skyhook-harness.js';

const NODE = 'shared-0';
const REBOOT: Package = {
  version: '1.0.0',
  image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
  interrupt: { type: 'reboot' },
};

let h: SkyhookHarness;
let host: SimulatedHost;

beforeAll(async () => {
  h = await startSkyhookHarness([{ name: NODE, labels: { shared: 'yes' } }], { simulatedHost: {} });
  host = h.host!;
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const readNode = (): Promise<V1Node> => h.core.readNode({ name: NODE });
const claimsOn = (node: V1Node): string[] =>
  Object.keys(node.metadata?.annotations ?? {})
    .filter((key) => key.startsWith(nodeAnnotations.cordon('')))
    .sort();

async function setDisabled(name: string, disabled: boolean): Promise<void> {
  const ref = { group: API_GROUP, version: API_VERSION, plural: KINDS.skyhook.plural, name };
  await mergePatchCustomObject(h.custom, ref, {
    metadata: { annotations: { [SKYHOOK_ANNOTATIONS.disable]: disabled ? 'true' : null } },
  });
}

describe('two SCRs cordoning the same node', () => {
  it('leave it cordoned until both are complete', async () => {
    await h.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'keeper', labels: { keep: 'me' } },
        spec: { nodeName: NODE, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    await waitForList<V1Pod>(
      h.cp.kubeConfig,
      '/api/v1/namespaces/default/pods',
      (ps) => ps.some((p) => p.metadata?.name === 'keeper' && p.status?.phase === 'Running'),
      30_000,
      'keeper running',
    );

    await createSkyhook(h, {
      metadata: { name: 'first' },
      spec: {
        priority: 1,
        nodeSelectors: { matchLabels: { shared: 'yes' } },
        podNonInterruptLabels: { matchLabels: { keep: 'me' } },
        packages: { kernel: REBOOT },
      },
    });
    await waitForSkyhook(
      h,
      'first',
      (s) => s.status?.conditions?.some((c) => c.type === SKYHOOK_CONDITIONS.blocked && c.status === 'True') === true,
    );
    expect(claimsOn(await readNode())).toEqual([nodeAnnotations.cordon('first')]);

    await setDisabled('first', true);
    await createSkyhook(h, {
      metadata: { name: 'second' },
      spec: { priority: 2, nodeSelectors: { matchLabels: { shared: 'yes' } }, packages: { kernel: REBOOT } },
    });
    await waitForSkyhook(h, 'second', (s) => s.status?.status === 'complete', 120_000);
    const afterSecond = await readNode();
    expect(host.interrupts.filter((i) => i.node === NODE)).toHaveLength(1);
    expect(afterSecond.spec?.unschedulable).toBe(true);
    expect(claimsOn(afterSecond)).toEqual([nodeAnnotations.cordon('first')]);

    // second's drain evicted the pod that held first; enabled again, first completes and the last claim goes.
    await setDisabled('first', false);
    await waitForSkyhook(h, 'first', (s) => s.status?.status === 'complete', 120_000);
    const afterBoth = await readNode();
    expect(host.interrupts.filter((i) => i.node === NODE)).toHaveLength(2);
    expect(afterBoth.spec?.unschedulable).toBeFalsy();
    expect(claimsOn(afterBoth)).toEqual([]);
  }, 300_000);
});
