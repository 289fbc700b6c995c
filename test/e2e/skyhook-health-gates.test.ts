/**
 * Health gates through the real operator on simulated nodes: a beforeBatch gate on a node
 * condition that the test sets 10 s after the first node finished holds the next batch until then
 * (a watch of the second node's status shows its first start after the condition's write), visibly (the node's `waiting_<scr>` says HealthGate, an Event says it started),
 * and an operator restart meanwhile keeps the wait's start;
 * a beforeUncordon gate that never passes leaves the rebooted node cordoned and erroring with the
 * gate's reason, and lets it go once the condition appears.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import { nodeAnnotations, nodeConditionTypes } from '../../src/api/names.js';
import type { Package } from '../../src/api/skyhook.js';
import { STRATEGIC_MERGE_PATCH } from '../../src/kube/client.js';
import {
  createDeploymentPolicy,
  createGroupSkyhook,
  groupNodes,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';
import { waitForValue } from './eventually.js';
import { recordNodeAnnotation } from './node-timeline.js';

const PACKAGE: Package = { version: '1.0.0', image: 'ghcr.io/nvidia/skyhook-packages/shellscript' };
const BATCH_NODES = ['batch-0', 'batch-1'];

let h: SkyhookHarness;

beforeAll(async () => {
  h = await startSkyhookHarness([...groupNodes('batch', 2), ...groupNodes('reboot', 1)], { simulatedHost: {} });
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const readNode = (name: string): Promise<V1Node> => h.core.readNode({ name });
const annotation = (node: V1Node, key: string): string | undefined => node.metadata?.annotations?.[key];

/** Sets a node condition through the status subresource, as a node problem detector would; returns the node's new resourceVersion. */
async function setCondition(name: string, type: string): Promise<number> {
  const now = new Date().toISOString();
  const condition = {
    type,
    status: 'True',
    reason: 'TestSet',
    message: 'set by the test',
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  };
  const patched = await h.core.patchNodeStatus(
    { name, body: { status: { conditions: [condition] } } },
    STRATEGIC_MERGE_PATCH,
  );
  return Number(patched.metadata?.resourceVersion);
}

describe('a beforeBatch gate on a node condition', () => {
  it('holds the next batch until the condition is set 10 s later, visibly', async () => {
    await createDeploymentPolicy(h, 'settle', {
      default: { budget: { count: 1 }, strategy: { fixed: { initialBatch: 1 } } },
      healthGates: {
        beforeBatch: [{ name: 'settled', timeout: '5m', nodeConditions: [{ type: 'Settled', status: 'True' }] }],
      },
    });
    await createGroupSkyhook(h, 'batchgate', 'batch', { deploymentPolicy: 'settle', packages: { pkg: PACKAGE } });
    const waitingKey = nodeAnnotations.waiting('batchgate');
    const statusKey = nodeAnnotations.status('batchgate');
    // Every status each batch node takes, from a watch: a start between two polls cannot be missed.
    const histories = new Map(
      await Promise.all(
        BATCH_NODES.map(async (name) => [name, await recordNodeAnnotation(h, name, statusKey)] as const),
      ),
    );
    const first = await waitForValue(
      'a node waiting on its beforeBatch gate',
      async () => {
        for (const name of BATCH_NODES) {
          const node = await readNode(name);
          if (annotation(node, waitingKey)?.startsWith('HealthGate: beforeBatch gate settled')) return node;
        }
        return undefined;
      },
      { timeoutMs: 120_000 },
    );
    const gatedAt = Date.now();
    const firstName = first.metadata!.name!;
    const secondName = BATCH_NODES.find((name) => name !== firstName)!;
    expect(annotation(first, waitingKey)).toContain('condition Settled is absent, want True');
    expect(annotation(first, statusKey)).toBe('in_progress');
    expect(annotation(first, nodeAnnotations.healthGate('batchgate'))).toContain('"point":"beforeBatch"');
    // The wait's start is on the node: an operator restart meanwhile does not restart the timeout.
    const since = annotation(first, nodeAnnotations.healthGate('batchgate'));
    await h.stopOperator();
    await h.startOperator();
    // The gate fails for 10 s (the operator restarted meanwhile); the history below shows the second
    // node did not start in that time.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, gatedAt + 10_000 - Date.now())));
    expect(annotation(await readNode(firstName), nodeAnnotations.healthGate('batchgate'))).toBe(since);
    const events = await h.core.listEventForAllNamespaces({
      fieldSelector: `involvedObject.name=${firstName},reason=HealthGate`,
    });
    expect(events.items.some((event) => event.message?.includes('[batchgate] waits: beforeBatch gate settled'))).toBe(
      true,
    );
    const setRevision = await setCondition(firstName, 'Settled');
    await waitForValue(
      'the second node to start',
      async () => (annotation(await readNode(secondName), statusKey) === 'in_progress' ? true : undefined),
      { timeoutMs: 120_000 },
    );
    // The next batch started because the gate passed: the second node's first start is a write after
    // the condition's (the API server's order), so it had not started before.
    const second = histories.get(secondName)!.values;
    const starts = second.filter((v) => v.value === 'in_progress');
    expect(starts.length).toBeGreaterThan(0);
    expect(starts[0]!.resourceVersion).toBeGreaterThan(setRevision);
    await Promise.all([...histories.values()].map((history) => history.stop()));
    const afterFirst = await readNode(firstName);
    expect(annotation(afterFirst, waitingKey)).toBeUndefined();
    expect(annotation(afterFirst, nodeAnnotations.healthGate('batchgate'))).toBeUndefined();
    // The second node's gate needs the condition too.
    await setCondition(secondName, 'Settled');
    await waitForSkyhook(h, 'batchgate', (scr) => scr.status?.status === 'complete', 120_000);
  }, 240_000);
});

describe('a beforeUncordon gate that never passes', () => {
  it('leaves the rebooted node cordoned and erroring with the gate reason, until the gate passes', async () => {
    await createDeploymentPolicy(h, 'validate', {
      default: { budget: { count: 1 }, strategy: { fixed: { initialBatch: 1 } } },
      healthGates: {
        beforeUncordon: [{ name: 'validated', timeout: '5s', nodeConditions: [{ type: 'Validated', status: 'True' }] }],
      },
    });
    await createGroupSkyhook(h, 'uncordongate', 'reboot', {
      deploymentPolicy: 'validate',
      packages: { kernel: { ...PACKAGE, interrupt: { type: 'reboot' } } },
    });
    const node = await waitForValue(
      'the node erroring on its beforeUncordon gate',
      async () => {
        const found = await readNode('reboot-0');
        return annotation(found, nodeAnnotations.status('uncordongate')) === 'erroring' ? found : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(h.host!.interrupts.some((interrupt) => interrupt.node === 'reboot-0' && interrupt.rebootsNode)).toBe(true);
    expect(node.spec?.unschedulable).toBe(true);
    expect(annotation(node, nodeAnnotations.cordon('uncordongate'))).toBe('true');
    const reason = 'beforeUncordon gate validated did not pass within 5s: condition Validated is absent, want True';
    expect(annotation(node, nodeAnnotations.waiting('uncordongate'))).toBe(`HealthGateTimedOut: ${reason}`);
    const erroring = node.status?.conditions?.find((c) => c.type === nodeConditionTypes.erroring('uncordongate'));
    expect(erroring).toMatchObject({ status: 'True', reason: 'HealthGateFailed', message: reason });
    const scr = await waitForSkyhook(h, 'uncordongate', (s) => s.status?.status === 'erroring');
    expect(scr.status?.nodeState?.['reboot-0']).toBeDefined();
    // Still cordoned a few rechecks later.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect((await readNode('reboot-0')).spec?.unschedulable).toBe(true);

    await setCondition('reboot-0', 'Validated');
    await waitForSkyhook(h, 'uncordongate', (s) => s.status?.status === 'complete', 60_000);
    const released = await readNode('reboot-0');
    expect(released.spec?.unschedulable).not.toBe(true);
    expect(annotation(released, nodeAnnotations.cordon('uncordongate'))).toBeUndefined();
  }, 240_000);
});

describe('gate problems', () => {
  it('the API server refuses a gate with two checks, naming the field; a CEL expression that does not compile is InvalidSpec naming it', async () => {
    const refused = createDeploymentPolicy(h, 'two-checks', {
      default: { budget: { count: 1 }, strategy: { fixed: {} } },
      healthGates: {
        beforeBatch: [{ name: 'both', cel: 'true', nodeConditions: [{ type: 'Ready', status: 'True' }] }],
      },
    });
    await expect(refused).rejects.toThrow(
      /spec\.healthGates\.beforeBatch\[0\]: Invalid value: .*healthGates: a gate sets exactly one of nodeConditions, cel, pods or prometheus/,
    );
    await createDeploymentPolicy(h, 'bad-cel', {
      default: { budget: { count: 1 }, strategy: { fixed: {} } },
      healthGates: { beforeBatch: [{ name: 'typo', cel: 'nod.metadata.name == "x"' }] },
    });
    await createGroupSkyhook(h, 'badcel', 'batch', { deploymentPolicy: 'bad-cel', packages: { pkg: PACKAGE } });
    const scr = await waitForSkyhook(h, 'badcel', (s) =>
      (s.status?.conditions ?? []).some((c) => c.type === 'InvalidSpec' && c.status === 'True'),
    );
    const condition = scr.status?.conditions?.find((c) => c.type === 'InvalidSpec');
    expect(condition?.message).toContain(
      'DeploymentPolicy bad-cel spec.healthGates.beforeBatch[0].cel: Unknown variable: nod',
    );
  }, 60_000);
});
