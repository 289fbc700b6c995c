/**
 * NodeOp selection and pacing against the real control plane: concurrency is never exceeded (a
 * watcher sees every Job for the whole test), control-plane nodes go first, stopOnFailure starts
 * nothing after a failure and says why, and nodes that start matching later are processed.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import { API_GROUP, API_VERSION, NODEOP_CONDITIONS } from '../../src/api/names.js';
import type { NodeOpSpec } from '../../src/api/nodeop.js';
import { SIM_ENV } from '../../src/sandbox/kwok-stages.js';
import {
  createNamespace,
  createNodeOp,
  startNodeOpHarness,
  waitForNodeOp,
  watchJobs,
  type NodeOpHarness,
} from './nodeop-harness.js';

let h: NodeOpHarness;

// The control-plane node sorts last by name, so running first proves the ordering rule.
const NODES = ['a-1', 'a-2', 'a-3', 'z-cp'];
const CONTROL_PLANE = 'z-cp';

beforeAll(async () => {
  h = await startNodeOpHarness([
    ...NODES.filter((n) => n !== CONTROL_PLANE).map((name) => ({ name, labels: { group: 'pace' } })),
    { name: CONTROL_PLANE, labels: { group: 'pace', 'node-role.kubernetes.io/control-plane': '' } },
  ]);
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const spec = (extra: Partial<NodeOpSpec> = {}): NodeOpSpec => ({
  nodeSelector: { matchLabels: { group: 'pace' } },
  image: 'busybox:1.37',
  command: ['/bin/sh', '-c', 'echo hello from $NODE_NAME'],
  ...extra,
});

describe.each([1, 2])('concurrency %i over 4 nodes', (concurrency) => {
  it('never has more Jobs in flight than the concurrency, starts with the control-plane node and completes every node', async () => {
    const ns = `pace-c${concurrency}`;
    await createNamespace(h, ns);
    const jobs = await watchJobs(h, ns);
    await createNodeOp(h, ns, 'run', spec({ concurrency }));
    const done = await waitForNodeOp(h, ns, 'run', (op) => op.status?.phase === 'Completed');
    await jobs.stop();

    expect(jobs.maxInFlight).toBe(concurrency);
    expect(jobs.nodesInOrder[0]).toBe(CONTROL_PLANE);
    expect([...jobs.nodesInOrder].sort()).toEqual(NODES);
    expect([...jobs.uidsByName.values()].every((uids) => uids.size === 1)).toBe(true);
    for (const node of NODES) {
      expect(done.status?.nodeStatuses?.[node]).toMatchObject({ phase: 'Completed', rebootStatus: 'not-requested' });
    }
    // Written by merge patches of the changed nodes' entries, into a map that is atomic for field
    // management (src/api/schema-helpers.ts PerNodeMap): one managedFields entry, not one per node.
    const stored = (await h.custom.getNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: 'nodeops',
      namespace: ns,
      name: 'run',
    })) as { metadata: { managedFields?: Array<{ subresource?: string; fieldsV1?: Record<string, unknown> }> } };
    const statusFields = (stored.metadata.managedFields ?? []).filter((entry) => entry.subresource === 'status');
    expect(statusFields).toHaveLength(1);
    const owned = (statusFields[0]?.fieldsV1?.['f:status'] ?? {}) as Record<string, unknown>;
    expect(owned['f:nodeStatuses']).toEqual({});
  });
});

describe('stopOnFailure', () => {
  it("starts no further node after the second node's Job exits 3, and says why", async () => {
    const ns = 'pace-stop';
    await createNamespace(h, ns);
    const jobs = await watchJobs(h, ns);
    await createNodeOp(
      h,
      ns,
      'stop',
      spec({
        concurrency: 1,
        stopOnFailure: true,
        backoffLimit: 0,
        // The second node in order (after the control-plane node) fails; the others would succeed.
        env: [
          { name: SIM_ENV.exitCode, value: '3' },
          { name: SIM_ENV.failNode, value: 'a-1' },
        ],
      }),
    );
    const failed = await waitForNodeOp(h, ns, 'stop', (op) => op.status?.phase === 'Failed');
    // A bounded look for a wrong start: the controller has reconciled the failure by now, and any
    // further Job would appear within a few reconciles.
    await delay(2_000);
    await jobs.stop();

    expect(jobs.nodesInOrder).toEqual([CONTROL_PLANE, 'a-1']);
    const statuses = failed.status?.nodeStatuses ?? {};
    expect(statuses[CONTROL_PLANE]?.phase).toBe('Completed');
    expect(statuses['a-1']?.phase).toBe('Failed');
    expect(statuses['a-1']?.message).toMatch(/exited with code 3/);
    expect(statuses['a-2']).toBeUndefined();
    expect(statuses['a-3']).toBeUndefined();
    const stopped = failed.status?.conditions?.find((c) => c.type === NODEOP_CONDITIONS.stoppedOnFailure);
    expect(stopped?.status).toBe('True');
    expect(stopped?.message).toMatch(/node a-1 failed/);
    expect(stopped?.message).toMatch(/not started: a-2, a-3/);
  });
});

describe('selection', () => {
  it('runs only on the listed targetNodes', async () => {
    const ns = 'pace-targets';
    await createNamespace(h, ns);
    const jobs = await watchJobs(h, ns);
    await createNodeOp(h, ns, 'two', { ...spec(), nodeSelector: undefined, targetNodes: ['a-2', 'a-3'] });
    const done = await waitForNodeOp(h, ns, 'two', (op) => op.status?.phase === 'Completed');
    await jobs.stop();
    expect([...jobs.nodesInOrder].sort()).toEqual(['a-2', 'a-3']);
    expect(Object.keys(done.status?.nodeStatuses ?? {}).sort()).toEqual(['a-2', 'a-3']);
  });

  it('processes a node that starts matching after the NodeOp was created', async () => {
    const ns = 'pace-late';
    await createNamespace(h, ns);
    await createNodeOp(h, ns, 'late', spec({ nodeSelector: { matchLabels: { group: 'late' } } }));
    const waiting = await waitForNodeOp(h, ns, 'late', (op) => op.status?.phase === 'Pending');
    expect(waiting.status?.conditions?.map((c) => c.type)).toContain(NODEOP_CONDITIONS.noMatchingNodes);

    await h.cp.addNodes([{ name: 'late-1', labels: { group: 'late' } }]);
    const done = await waitForNodeOp(h, ns, 'late', (op) => op.status?.phase === 'Completed');
    expect(done.status?.nodeStatuses?.['late-1']?.phase).toBe('Completed');
    expect(done.status?.conditions ?? []).toEqual([]);
  });
});
