/**
 * More of upstream's deployment-policy suite and interrupt failure handling, through the real
 * operator and the simulated host:
 *   - overlapping selectors: a node matching several compartments goes to the safest strategy
 *     (fixed, linear, exponential, none), then the smaller ceiling (counted over the SCR's nodes
 *     matching the selector), then the first name; compartmentStatuses and the batch sizes show it;
 *   - exponential batches in several compartments at once, each capped by its own ceiling;
 *   - legacy compatibility: an interruptionBudget and no policy is the `__default__` compartment;
 *   - an interrupt whose command fails leaves its node cordoned and erroring, with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CoreV1Event } from '@kubernetes/client-node';
import { DEFAULT_COMPARTMENT, nodeAnnotations } from '../../src/api/names.js';
import type { Package, Skyhook } from '../../src/api/skyhook.js';
import { STAGE_FAILED_REASON } from '../../src/controllers/skyhook/write/failed-stage-report.js';
import { parseNodeState } from '../../src/api/node-state.js';
import { waitForList } from '../../src/kube/wait.js';
import type { SimulatedHost } from '../../src/sandbox/simulated-host.js';
import {
  batches,
  batchSizes,
  createDeploymentPolicy,
  createGroupSkyhook,
  GROUP_LABEL,
  groupNodes,
  recordStageJobs,
  startSkyhookHarness,
  waitForSkyhook,
  watchNodesInProgress,
  type SkyhookHarness,
} from './skyhook-harness.js';

const GROUP = GROUP_LABEL;
const TIER = 'tier';
const PACKAGE: Package = { version: '1.0.0', image: 'ghcr.io/nvidia/skyhook-packages/shellscript' };
const names = (nodes: { name: string }[]): string[] => nodes.map((node) => node.name);

// overlapping selectors: each set of nodes matches two compartments (one matches none).
// (The API refuses two compartments with the same selector, so each compartment has its own label.)
const BY_STRATEGY = groupNodes('ov-strategy', 2, () => ({ [GROUP]: 'overlap', 'a-linear': 'yes', 'z-fixed': 'yes' }));
const BY_CEILING = groupNodes('ov-ceiling', 4, () => ({ [GROUP]: 'overlap', 'd-count': 'yes', 'p-percent': 'yes' }));
const BY_NAME = groupNodes('ov-name', 1, () => ({ [GROUP]: 'overlap', 'x-second': 'yes', 'c-first': 'yes' }));
const BY_NONE = groupNodes('ov-none', 2, () => ({ [GROUP]: 'overlap', 'm-none': 'yes', 'n-exponential': 'yes' }));
const UNMATCHED = groupNodes('ov-plain', 1, () => ({ [GROUP]: 'overlap' }));
// exponential in several compartments.
const CRITICAL = groupNodes('exp-critical', 4, () => ({ [GROUP]: 'expo', [TIER]: 'critical' }));
const STANDARD = groupNodes('exp-standard', 6, () => ({ [GROUP]: 'expo', [TIER]: 'standard' }));
const REST = groupNodes('exp-rest', 4, () => ({ [GROUP]: 'expo' }));
const LEGACY = groupNodes('legacy', 5);
const FAILING = groupNodes('fail', 2);

let h: SkyhookHarness;
let host: SimulatedHost;

beforeAll(async () => {
  // fail-0's interrupt command fails; fail-1's succeeds.
  h = await startSkyhookHarness(
    [
      ...BY_STRATEGY,
      ...BY_CEILING,
      ...BY_NAME,
      ...BY_NONE,
      ...UNMATCHED,
      ...CRITICAL,
      ...STANDARD,
      ...REST,
      ...LEGACY,
      ...FAILING,
    ],
    { simulatedHost: { failNodes: ['fail-0'] } },
  );
  host = h.host!;
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const scr = (name: string, group: string, spec: Partial<Skyhook['spec']>): Promise<void> =>
  createGroupSkyhook(h, name, group, { packages: { pkg: PACKAGE }, ...spec });

describe('overlapping selectors', () => {
  it('puts a node matching several compartments in the safest strategy, then the smaller ceiling, then the first name', async () => {
    const jobs = await recordStageJobs(h);
    const selector = (compartment: string) => ({ matchLabels: { [compartment]: 'yes' } });
    await createDeploymentPolicy(h, 'overlap', {
      default: { budget: { count: 1 }, strategy: { fixed: { initialBatch: 1 } } },
      compartments: [
        // Strategy first: fixed beats linear though its ceiling is larger and its name later.
        {
          name: 'a-linear',
          selector: selector('a-linear'),
          budget: { count: 2 },
          strategy: { linear: { initialBatch: 2, delta: 1 } },
        },
        {
          name: 'z-fixed',
          selector: selector('z-fixed'),
          budget: { count: 5 },
          strategy: { fixed: { initialBatch: 1 } },
        },
        // Same strategy: 25% of the 4 matching nodes is a ceiling of 1, below d-count's 2.
        {
          name: 'd-count',
          selector: selector('d-count'),
          budget: { count: 2 },
          strategy: { fixed: { initialBatch: 2 } },
        },
        {
          name: 'p-percent',
          selector: selector('p-percent'),
          budget: { percent: 25 },
          strategy: { fixed: { initialBatch: 1 } },
        },
        // Same strategy and ceiling: the first name.
        {
          name: 'x-second',
          selector: selector('x-second'),
          budget: { count: 2 },
          strategy: { fixed: { initialBatch: 1 } },
        },
        {
          name: 'c-first',
          selector: selector('c-first'),
          budget: { count: 2 },
          strategy: { fixed: { initialBatch: 1 } },
        },
        // No strategy is the least safe: exponential wins over a smaller ceiling and an earlier name.
        { name: 'm-none', selector: selector('m-none'), budget: { count: 2 } },
        {
          name: 'n-exponential',
          selector: selector('n-exponential'),
          budget: { count: 5 },
          strategy: { exponential: { initialBatch: 1, growthFactor: 2 } },
        },
      ],
    });
    await scr('overlap', 'overlap', { deploymentPolicy: 'overlap' });
    const done = await waitForSkyhook(h, 'overlap', (s) => s.status?.status === 'complete', 150_000);
    await jobs.stop();

    const statuses = done.status?.compartmentStatuses ?? {};
    const matched = Object.fromEntries(Object.entries(statuses).map(([name, status]) => [name, status.matched]));
    expect(matched).toMatchObject({
      'z-fixed': 2,
      'p-percent': 4,
      'c-first': 1,
      'n-exponential': 2,
      [DEFAULT_COMPARTMENT]: 1,
    });
    for (const loser of ['a-linear', 'd-count', 'x-second', 'm-none']) expect(matched[loser] ?? 0).toBe(0);
    expect(statuses['p-percent']).toMatchObject({ ceiling: 1, completed: 4, progressPercent: 100 });
    expect(statuses['z-fixed']).toMatchObject({ ceiling: 5, completed: 2, progressPercent: 100 });
    // The batches are the winners' (a-linear would start with 2, d-count run 2 at a time, m-none both at once).
    expect(batchSizes(batches(jobs, 'overlap', names(BY_STRATEGY)))).toEqual([1, 1]);
    expect(batchSizes(batches(jobs, 'overlap', names(BY_CEILING)))).toEqual([1, 1, 1, 1]);
    expect(batchSizes(batches(jobs, 'overlap', names(BY_NONE)))).toEqual([1, 1]);
  }, 180_000);
});

describe('exponential strategy in several compartments', () => {
  it("grows each compartment's batches by its own growth factor, side by side, never past the compartment's ceiling", async () => {
    const jobs = await recordStageJobs(h);
    const exponential = (growthFactor: number) => ({ exponential: { initialBatch: 1, growthFactor } });
    await createDeploymentPolicy(h, 'expo', {
      default: { budget: { percent: 100 }, strategy: exponential(3) },
      compartments: [
        {
          name: 'critical',
          selector: { matchLabels: { [TIER]: 'critical' } },
          budget: { count: 2 },
          strategy: exponential(3),
        },
        {
          name: 'standard',
          selector: { matchLabels: { [TIER]: 'standard' } },
          budget: { percent: 50 },
          strategy: exponential(2),
        },
      ],
    });
    await scr('expo', 'expo', { deploymentPolicy: 'expo' });
    const done = await waitForSkyhook(h, 'expo', (s) => s.status?.status === 'complete', 180_000);
    await jobs.stop();

    // 1, then 3 capped to the ceiling of 2 (upstream lets a batch outgrow the budget; we do not), then the last one.
    expect(batchSizes(batches(jobs, 'expo', names(CRITICAL)))).toEqual([1, 2, 1]);
    // 1, 2, then 4 capped to the 3 nodes left (the ceiling, 50% of 6).
    expect(batchSizes(batches(jobs, 'expo', names(STANDARD)))).toEqual([1, 2, 3]);
    expect(batchSizes(batches(jobs, 'expo', names(REST)))).toEqual([1, 3]);
    // The compartments ran at the same time: each one's first Job came before another's last.
    const span = (nodes: string[]) => {
      const own = [...jobs.jobs.values()].filter((job) => job.skyhook === 'expo' && nodes.includes(job.node));
      return { start: Math.min(...own.map((j) => j.seenAt)), end: Math.max(...own.map((j) => j.doneAt ?? Infinity)) };
    };
    const spans = [span(names(CRITICAL)), span(names(STANDARD)), span(names(REST))];
    expect(Math.max(...spans.map((s) => s.start))).toBeLessThan(Math.min(...spans.map((s) => s.end)));

    const statuses = done.status?.compartmentStatuses ?? {};
    expect(statuses['critical']).toMatchObject({
      matched: 4,
      ceiling: 2,
      inProgress: 0,
      completed: 4,
      progressPercent: 100,
    });
    expect(statuses['standard']).toMatchObject({
      matched: 6,
      ceiling: 3,
      inProgress: 0,
      completed: 6,
      progressPercent: 100,
    });
    expect(statuses[DEFAULT_COMPARTMENT]).toMatchObject({
      matched: 4,
      ceiling: 4,
      inProgress: 0,
      completed: 4,
      progressPercent: 100,
    });
  }, 240_000);
});

describe('legacy compatibility', () => {
  it('shows an SCR with an interruptionBudget and no policy as the __default__ compartment, and keeps to its ceiling', async () => {
    const inProgress = await watchNodesInProgress(h, 'legacy');
    await scr('legacy', 'legacy', { interruptionBudget: { count: 2 } });
    const done = await waitForSkyhook(h, 'legacy', (s) => s.status?.status === 'complete', 150_000);
    await inProgress.stop();

    expect(Object.keys(done.status?.compartmentStatuses ?? {})).toEqual([DEFAULT_COMPARTMENT]);
    expect(done.status?.compartmentStatuses?.[DEFAULT_COMPARTMENT]).toMatchObject({
      matched: 5,
      ceiling: 2,
      inProgress: 0,
      completed: 5,
      progressPercent: 100,
    });
    expect(done.status?.completeNodes).toBe('5/5');
    expect(inProgress.max()).toBe(2);
  }, 180_000);
});

describe('an interrupt that fails', () => {
  it('leaves the node cordoned and erroring at the interrupt stage, with the reason; the other node completes', async () => {
    await scr('failing', 'fail', {
      packages: { svc: { ...PACKAGE, interrupt: { type: 'service', services: ['containerd'] } } },
    });
    const settled = await waitForSkyhook(
      h,
      'failing',
      (s) => s.status?.nodeStatus?.['fail-0'] === 'erroring' && s.status.nodeStatus['fail-1'] === 'complete',
      150_000,
    );

    expect(settled.status?.status).toBe('erroring');
    expect(settled.status?.nodeState?.['fail-0']?.['svc|1.0.0']).toMatchObject({
      stage: 'interrupt',
      state: 'erroring',
    });
    expect(host.interrupts.filter((i) => i.node === 'fail-0').every((i) => i.failed)).toBe(true);
    expect(host.interrupts.filter((i) => i.node === 'fail-1')).toEqual([expect.objectContaining({ failed: false })]);

    const events = await waitForList<CoreV1Event>(
      h.cp.kubeConfig,
      '/api/v1/events',
      (all) => all.some((e) => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === 'failing'),
      60_000,
      'StageFailed event on the SCR',
    );
    const event = events.find((e) => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === 'failing')!;
    expect(event.type).toBe('Warning');
    expect(event.message).toContain('Package [svc:1.0.0] stage [interrupt] failed on node [fail-0]');
    expect(event.message).toMatch(/the interrupt after Job \S+ failed: container \S+ exited with code 1/);

    const failed = await h.core.readNode({ name: 'fail-0' });
    expect(failed.spec?.unschedulable).toBe(true);
    expect(failed.metadata?.annotations?.[nodeAnnotations.cordon('failing')]).toBe('true');
    expect(failed.metadata?.annotations?.[nodeAnnotations.status('failing')]).toBe('erroring');
    expect(
      parseNodeState(failed.metadata?.annotations?.[nodeAnnotations.nodeState('failing')] ?? '{}')['svc|1.0.0'],
    ).toMatchObject({ stage: 'interrupt', state: 'erroring' });
    const fine = await h.core.readNode({ name: 'fail-1' });
    expect(fine.spec?.unschedulable).toBeFalsy();
  }, 180_000);
});
