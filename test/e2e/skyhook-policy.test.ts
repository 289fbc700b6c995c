/**
 * DeploymentPolicy rollouts through the real operator, after upstream's deployment-policy suite:
 * the batch sizes of linear, fixed and exponential strategies as the stage Jobs show them (a batch
 * starts only once the previous one is done), compartments by selector with their
 * compartmentStatuses and rollout metrics, batch state kept or reset on completion, a failing batch
 * stopping the rollout at failureThreshold, and an SCR naming a missing policy blocked until the
 * policy appears; and a freshly created Skyhook's every labelled series at /metrics, 0 before
 * anything is counted.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEFAULT_COMPARTMENT, SKYHOOK_CONDITIONS } from '../../src/api/names.js';
import { PACKAGE_STAGES, PACKAGE_STATES } from '../../src/api/skyhook-status.js';
import { SKYHOOK_STATUSES, type Package, type Skyhook } from '../../src/api/skyhook.js';
import { SIM_ENV } from '../../src/sandbox/kwok-stages.js';
import {
  batches,
  batchSizes,
  createDeploymentPolicy,
  createGroupSkyhook,
  createSkyhook,
  GROUP_LABEL,
  groupNodes,
  recordStageJobs,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';
import { metricsWith } from './eventually.js';

const TIER = 'tier';
const PACKAGE: Package = { version: '1.0.0', image: 'ghcr.io/nvidia/skyhook-packages/shellscript' };

let h: SkyhookHarness;

beforeAll(async () => {
  h = await startSkyhookHarness(
    [
      ...groupNodes('linear', 6),
      ...groupNodes('multi', 7, (i): Record<string, string> => (i < 2 ? { [TIER]: 'critical' } : {})),
      ...groupNodes('stop', 3),
      ...groupNodes('missing', 1),
      // A failing stage fails its node at once, so the failed batch is judged without waiting for retries.
    ],
    { skyhook: { settings: { jobBackoffLimit: 0 } } },
  );
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const scr = (name: string, group: string, spec: Partial<Skyhook['spec']>): Promise<void> =>
  createGroupSkyhook(h, name, group, { packages: { pkg: PACKAGE }, ...spec });

/** /metrics once it has every line: the operator reports a pass's metrics after the status write a test waits for. */
const metricsWithLines = (...lines: string[]): Promise<string> => metricsWith(h.manager()!.metricsPort, lines);

describe('linear strategy', () => {
  it('runs batches of 1, 2, 3 nodes; keeps the batch state when the SCR says not to reset it', async () => {
    const jobs = await recordStageJobs(h);
    await createDeploymentPolicy(h, 'linear', {
      default: { budget: { count: 4 }, strategy: { linear: { initialBatch: 1, delta: 1 } } },
    });
    await scr('linear', 'linear', {
      deploymentPolicy: 'linear',
      deploymentPolicyOptions: { resetBatchStateOnCompletion: false },
    });
    const done = await waitForSkyhook(h, 'linear', (s) => s.status?.status === 'complete', 150_000);
    await jobs.stop();

    expect(
      batchSizes(
        batches(
          jobs,
          'linear',
          groupNodes('linear', 6).map((n) => n.name),
        ),
      ),
    ).toEqual([1, 2, 3]);
    const compartment = done.status?.compartmentStatuses?.[DEFAULT_COMPARTMENT];
    expect(compartment).toMatchObject({ matched: 6, ceiling: 4, inProgress: 0, completed: 6, progressPercent: 100 });
    expect(compartment?.batchState?.currentBatch).toBeGreaterThan(1);
    const expected = [
      `skyhook_rollout_completed{skyhook_name="linear",policy_name="linear",compartment_name="${DEFAULT_COMPARTMENT}",strategy="linear"} 6`,
      `skyhook_rollout_matched_nodes{skyhook_name="linear",policy_name="linear",compartment_name="${DEFAULT_COMPARTMENT}",strategy="linear"} 6`,
    ];
    const metrics = await metricsWithLines(...expected);
    for (const line of expected) expect(metrics).toContain(line);
  }, 180_000);
});

describe('compartments with fixed and exponential strategies', () => {
  it('rolls the critical compartment 1 node at a time and the rest in batches of 1, 2, 2; resets batch state on completion', async () => {
    const jobs = await recordStageJobs(h);
    await createDeploymentPolicy(h, 'tiers', {
      default: { budget: { percent: 40 }, strategy: { exponential: { initialBatch: 1, growthFactor: 2 } } },
      compartments: [
        {
          name: 'critical',
          selector: { matchLabels: { [TIER]: 'critical' } },
          budget: { count: 1 },
          strategy: { fixed: { initialBatch: 1 } },
        },
      ],
    });
    await scr('tiers', 'multi', { deploymentPolicy: 'tiers' });
    const done = await waitForSkyhook(h, 'tiers', (s) => s.status?.status === 'complete', 150_000);
    await jobs.stop();

    const nodes = groupNodes('multi', 7).map((n) => n.name);
    expect(batches(jobs, 'tiers', nodes.slice(0, 2))).toEqual([['multi-0'], ['multi-1']]);
    expect(batchSizes(batches(jobs, 'tiers', nodes.slice(2)))).toEqual([1, 2, 2]);
    const statuses = done.status?.compartmentStatuses ?? {};
    expect(statuses['critical']).toMatchObject({ matched: 2, ceiling: 1, completed: 2, progressPercent: 100 });
    expect(statuses[DEFAULT_COMPARTMENT]).toMatchObject({ matched: 5, ceiling: 2, completed: 5, progressPercent: 100 });
    // The policy resets batch state when the rollout completes (its default).
    expect(statuses['critical']?.batchState?.currentBatch).toBe(1);
    expect(statuses[DEFAULT_COMPARTMENT]?.batchState?.currentBatch).toBe(1);
    const expected = [
      'skyhook_rollout_ceiling{skyhook_name="tiers",policy_name="tiers",compartment_name="critical",strategy="fixed"} 1',
      `skyhook_rollout_ceiling{skyhook_name="tiers",policy_name="tiers",compartment_name="${DEFAULT_COMPARTMENT}",strategy="exponential"} 2`,
    ];
    const metrics = await metricsWithLines(...expected);
    for (const line of expected) expect(metrics).toContain(line);
  }, 180_000);
});

describe('failureThreshold', () => {
  it('stops the rollout after a failed batch: the other nodes never start', async () => {
    const jobs = await recordStageJobs(h);
    await createDeploymentPolicy(h, 'careful', {
      default: { budget: { count: 1 }, strategy: { fixed: { initialBatch: 1, failureThreshold: 1 } } },
    });
    const env = [
      { name: SIM_ENV.exitCode, value: '2' },
      { name: SIM_ENV.failNode, value: 'stop-0' },
    ];
    await scr('careful', 'stop', { deploymentPolicy: 'careful', packages: { pkg: { ...PACKAGE, env } } });
    const stopped = await waitForSkyhook(
      h,
      'careful',
      (s) => s.status?.compartmentStatuses?.[DEFAULT_COMPARTMENT]?.batchState?.shouldStop === true,
      120_000,
    );
    await jobs.stop();

    expect(stopped.status?.nodeStatus?.['stop-0']).toBe('erroring');
    expect(stopped.status?.compartmentStatuses?.[DEFAULT_COMPARTMENT]?.batchState).toMatchObject({
      consecutiveFailures: 1,
      shouldStop: true,
    });
    expect(Object.keys(jobs.stagesByNode('careful'))).toEqual(['stop-0']);
    const expected = [
      `skyhook_rollout_should_stop{skyhook_name="careful",policy_name="careful",compartment_name="${DEFAULT_COMPARTMENT}",strategy="fixed"} 1`,
    ];
    const metrics = await metricsWithLines(...expected);
    for (const line of expected) expect(metrics).toContain(line);
  }, 150_000);
});

describe('a missing DeploymentPolicy', () => {
  it('blocks the SCR with a condition until the policy is created, then completes', async () => {
    await scr('orphan', 'missing', { deploymentPolicy: 'later' });
    const blocked = await waitForSkyhook(
      h,
      'orphan',
      (s) =>
        s.status?.status === 'blocked' &&
        s.status.conditions?.some(
          (c) => c.type === SKYHOOK_CONDITIONS.deploymentPolicyNotFound && c.status === 'True',
        ) === true,
    );
    expect(
      blocked.status?.conditions?.find((c) => c.type === SKYHOOK_CONDITIONS.deploymentPolicyNotFound)?.message,
    ).toContain('later');
    expect(blocked.status?.nodeStatus?.['missing-0']).toBe('blocked');

    await createDeploymentPolicy(h, 'later', { default: { budget: { count: 1 }, strategy: { fixed: {} } } });
    const done = await waitForSkyhook(h, 'orphan', (s) => s.status?.status === 'complete');
    expect(
      done.status?.conditions?.find((c) => c.type === SKYHOOK_CONDITIONS.deploymentPolicyNotFound)?.status ?? 'False',
    ).toBe('False');
  }, 150_000);
});

describe('a freshly created Skyhook', () => {
  it('exposes every labelled series at /metrics from its first reconcile, 0 where nothing is counted', async () => {
    await createDeploymentPolicy(h, 'fresh', {
      default: { budget: { count: 1 }, strategy: { fixed: {} } },
      compartments: [
        {
          name: 'canary',
          selector: { matchLabels: { [TIER]: 'canary' } },
          budget: { count: 1 },
          strategy: { linear: { initialBatch: 1, delta: 1 } },
        },
      ],
    });
    // Over no node: nothing is ever counted, so every count series must be there at 0.
    await createSkyhook(h, {
      metadata: { name: 'fresh' },
      spec: {
        nodeSelectors: { matchLabels: { [GROUP_LABEL]: 'none' } },
        deploymentPolicy: 'fresh',
        packages: { pkg: PACKAGE },
      },
    });
    const own = 'skyhook_name="fresh"';
    const pkg = `${own},package_name="pkg",package_version="1.0.0"`;
    const compartments = [
      { name: DEFAULT_COMPARTMENT, strategy: 'fixed' },
      { name: 'canary', strategy: 'linear' },
    ];
    const rollout = compartments.flatMap(({ name, strategy }) => {
      const labels = `${own},policy_name="fresh",compartment_name="${name}",strategy="${strategy}"`;
      return [
        `skyhook_rollout_matched_nodes{${labels}} 0`,
        `skyhook_rollout_in_progress{${labels}} 0`,
        `skyhook_rollout_completed{${labels}} 0`,
        `skyhook_rollout_current_batch{${labels}} 1`,
        `skyhook_rollout_consecutive_failures{${labels}} 0`,
        `skyhook_rollout_should_stop{${labels}} 0`,
        // Their values follow from the budget and an empty compartment; the series is what counts here.
        `skyhook_rollout_ceiling{${labels}} `,
        `skyhook_rollout_progress_percent{${labels}} `,
      ];
    });
    const expected = [
      `skyhook_node_target_count{${own}} 0`,
      ...SKYHOOK_STATUSES.map((s) => `skyhook_node_status_count{${own},status="${s}"} 0`),
      // 1 for the one status it has (with no node to work on, complete), 0 for the others.
      ...SKYHOOK_STATUSES.map((s) => `skyhook_status{${own},status="${s}"} `),
      ...PACKAGE_STATES.map((s) => `skyhook_package_state_count{${pkg},state="${s}"} 0`),
      ...PACKAGE_STAGES.map((s) => `skyhook_package_stage_count{${pkg},stage="${s}"} 0`),
      `skyhook_package_restarts_count{${pkg}} 0`,
      ...rollout,
    ];
    const metrics = await metricsWithLines(...expected);
    for (const line of expected) expect(metrics).toContain(line);
    expect(metrics.match(/^skyhook_status\{skyhook_name="fresh",status="[a-z_]+"\} 1$/gm)).toHaveLength(1);
  }, 60_000);
});
