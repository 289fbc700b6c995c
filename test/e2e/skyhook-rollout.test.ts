/**
 * Rollout on 6 nodes through the real operator: an interruptionBudget (count 2, percent 50) is
 * never exceeded, seen by watchers of node status and of stage Jobs for the whole rollout; a stage
 * exiting 2 on one node (SKYHOOK_SIM_EXIT_CODE from the package env, in the stage container) makes
 * that package erroring with restarts, the node and the SCR erroring, and the counts say so.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { CHILD_LABELS, nodeAnnotations, nodeConditionTypes, nodeLabels } from '../../src/api/names.js';
import type { Package } from '../../src/api/skyhook.js';
import { parseNodeState } from '../../src/api/node-state.js';
import { SIM_ENV } from '../../src/sandbox/kwok-stages.js';
import {
  createSkyhook,
  DEMO_LABEL,
  demoNodes,
  listNodes,
  maxRunningJobs,
  NAMESPACE,
  recordStageJobs,
  startSkyhookHarness,
  waitForSkyhook,
  waitForSkyhookGone,
  watchNodesInProgress,
  type SkyhookHarness,
} from './skyhook-harness.js';

let h: SkyhookHarness;
const NODES = 6;

beforeAll(async () => {
  h = await startSkyhookHarness(demoNodes(NODES, 0));
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const PACKAGE: Package = { version: '1.0.0', image: 'ghcr.io/nvidia/skyhook-packages/shellscript' };

describe.each([
  { name: 'budget-count', budget: { count: 2 }, expected: 2 },
  { name: 'budget-percent', budget: { percent: 50 }, expected: 3 },
])('interruptionBudget $budget on 6 nodes', ({ name, budget, expected }) => {
  it(`never has more than ${expected} nodes in progress, and completes all 6`, async () => {
    const nodes = await watchNodesInProgress(h, name);
    const jobs = await recordStageJobs(h);
    await createSkyhook(h, {
      metadata: { name },
      spec: { nodeSelectors: { matchLabels: DEMO_LABEL }, interruptionBudget: budget, packages: { pkg: PACKAGE } },
    });
    const done = await waitForSkyhook(h, name, (scr) => scr.status?.status === 'complete');
    await Promise.all([nodes.stop(), jobs.stop()]);

    expect(done.status).toMatchObject({ completeNodes: '6/6', nodesInProgress: 0 });
    expect(nodes.max()).toBe(expected);
    // Running Jobs from each Job's own creation and completion events (not sampled).
    expect([...jobs.jobs.values()].filter((job) => job.seenRv === undefined || job.doneRv === undefined)).toEqual([]);
    expect(maxRunningJobs(jobs.jobs.values())).toBeGreaterThan(0);
    expect(maxRunningJobs(jobs.jobs.values())).toBeLessThanOrEqual(expected);
    const stages = jobs.stagesByNode(name);
    expect(Object.keys(stages)).toHaveLength(NODES);
    expect(Object.values(stages).every((s) => s.join() === 'apply,config')).toBe(true);
    await h.custom.deleteClusterCustomObject({
      group: 'skyhook.nvidia.com',
      version: 'v1alpha1',
      plural: 'skyhooks',
      name,
    });
    await waitForSkyhookGone(h, name);
  }, 150_000);
});

describe('the status of an SCR across its nodes', () => {
  // The per-node maps are atomic for field management (src/api/skyhook-status.ts): as granular
  // maps the API server recorded each node's entry in managedFields, a second copy of the status's
  // shape that made every status write of a 1000-node SCR cost it twice the CPU.
  it('keeps one managedFields entry per per-node map, not one per node', async () => {
    const name = 'status-fields';
    await createSkyhook(h, {
      metadata: { name },
      spec: {
        nodeSelectors: { matchLabels: DEMO_LABEL },
        interruptionBudget: { count: NODES },
        packages: { pkg: PACKAGE },
      },
    });
    await waitForSkyhook(h, name, (scr) => scr.status?.status === 'complete');
    const ref = { group: 'skyhook.nvidia.com', version: 'v1alpha1', plural: 'skyhooks', name };
    const scr = (await h.custom.getClusterCustomObject(ref)) as {
      metadata: {
        managedFields?: Array<{ subresource?: string; fieldsV1?: { 'f:status'?: Record<string, unknown> } }>;
      };
      status: {
        nodeState: Record<string, unknown>;
        nodeStatus: Record<string, unknown>;
        nodePriority: Record<string, unknown>;
      };
    };
    expect(Object.keys(scr.status.nodeState)).toHaveLength(NODES);
    expect(Object.keys(scr.status.nodeStatus)).toHaveLength(NODES);
    const statusFields = (scr.metadata.managedFields ?? []).filter((entry) => entry.subresource === 'status');
    expect(statusFields).toHaveLength(1);
    const owned = statusFields[0]?.fieldsV1?.['f:status'] ?? {};
    for (const map of ['f:nodeState', 'f:nodeStatus', 'f:nodePriority']) expect(owned[map]).toEqual({});
    await h.custom.deleteClusterCustomObject(ref);
    await waitForSkyhookGone(h, name);
  }, 120_000);
});

describe('a stage exiting 2 on one node', () => {
  it('makes the package erroring with restarts, the node and the SCR erroring, with the counts right', async () => {
    const failing = 'demo-1';
    const env = [
      { name: SIM_ENV.exitCode, value: '2' },
      { name: SIM_ENV.failNode, value: failing },
    ];
    await createSkyhook(h, {
      metadata: { name: 'failing' },
      spec: { nodeSelectors: { matchLabels: DEMO_LABEL }, packages: { broken: { ...PACKAGE, env } } },
    });
    const erroring = await waitForSkyhook(
      h,
      'failing',
      (scr) => scr.status?.status === 'erroring' && scr.status.completeNodes === '5/6',
    );

    expect(erroring.status).toMatchObject({ status: 'erroring', completeNodes: '5/6', nodesInProgress: 1 });
    expect(erroring.status?.nodeStatus?.[failing]).toBe('erroring');
    const node = (await listNodes(h)).find((n) => n.metadata?.name === failing)!;
    const entry = parseNodeState(node.metadata?.annotations?.[nodeAnnotations.nodeState('failing')] ?? '{}')[
      'broken|1.0.0'
    ];
    expect(entry).toMatchObject({ stage: 'apply', state: 'erroring' });
    expect(entry?.restarts).toBeGreaterThan(0);
    expect(node.metadata?.labels?.[nodeLabels.status('failing')]).toBe('erroring');
    expect(node.status?.conditions?.find((c) => c.type === nodeConditionTypes.erroring('failing'))).toMatchObject({
      status: 'True',
    });
    expect(node.status?.conditions?.find((c) => c.type === nodeConditionTypes.notReady('failing'))).toMatchObject({
      status: 'True',
    });

    // The exit code came from the package env, in the agent's stage container (not the copy step).
    const pods = (
      await h.core.listNamespacedPod({
        namespace: NAMESPACE,
        labelSelector: `${CHILD_LABELS.name}=failing,${CHILD_LABELS.node}=${failing}`,
      })
    ).items;
    const failedContainers = pods.flatMap((pod: V1Pod) =>
      (pod.status?.initContainerStatuses ?? []).filter((s) => s.state?.terminated?.exitCode === 2).map((s) => s.name),
    );
    expect(failedContainers).toContain('broken-apply');
  }, 150_000);
});
