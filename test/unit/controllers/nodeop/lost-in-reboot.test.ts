import { describe, expect, it } from '@jest/globals';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import {
  type FailedJobInput,
  judgeFailedJob,
  lostAttemptWord,
  MARKER_CHECK_GRACE_MS,
} from '../../../../src/controllers/nodeop/lost-in-reboot.js';

const NOW = Date.parse('2026-11-28T12:00:00Z');
const nodeWithBoot = (bootID: string): V1Node => ({ status: { nodeInfo: { bootID } } as V1Node['status'] });

function rebootPod(phase: string, container: { restartCount?: number; runningSinceMs?: number } = {}): V1Pod {
  const running =
    container.runningSinceMs === undefined ? undefined : { startedAt: new Date(NOW - container.runningSinceMs) };
  return {
    status: {
      phase,
      containerStatuses: [
        {
          name: 'reboot',
          image: 'x',
          imageID: 'x',
          ready: true,
          restartCount: container.restartCount ?? 0,
          ...(running ? { state: { running } } : {}),
        },
      ],
    },
  };
}

const input = (overrides: Partial<FailedJobInput>): FailedJobInput => ({
  rebootsNode: true,
  rebootPod: rebootPod('Running'),
  bootAtStart: 'boot-1',
  node: nodeWithBoot('boot-2'),
  now: NOW,
  deadline: NOW + 60_000,
  ...overrides,
});

describe('a failed Job whose NodeOp has an interrupt', () => {
  it('had succeeded when the reboot pod succeeded: it exits 0 only after seeing the Job sentinel', () => {
    expect(judgeFailedJob(input({ rebootPod: rebootPod('Succeeded') }))).toBe('succeeded');
    expect(judgeFailedJob(input({ rebootsNode: false, rebootPod: rebootPod('Succeeded') }))).toBe('succeeded');
  });

  it('waits for the reboot pod after a reboot, until it has spoken', () => {
    expect(judgeFailedJob(input({}))).toBe('wait');
    // Restarted after the boot a moment ago: its marker check has not been reported yet.
    expect(judgeFailedJob(input({ rebootPod: rebootPod('Running', { restartCount: 1, runningSinceMs: 2000 }) }))).toBe(
      'wait',
    );
  });

  it('failed when the node did not reboot since the NodeOp started there', () => {
    expect(judgeFailedJob(input({ node: nodeWithBoot('boot-1') }))).toBe('failed');
    expect(judgeFailedJob(input({ node: undefined }))).toBe('failed');
  });

  it('failed when the interrupt does not reboot, the reboot pod failed or is missing', () => {
    expect(judgeFailedJob(input({ rebootsNode: false }))).toBe('failed');
    expect(judgeFailedJob(input({ rebootPod: rebootPod('Failed') }))).toBe('failed');
    expect(judgeFailedJob(input({ rebootPod: undefined }))).toBe('failed');
  });

  it('failed when the restarted reboot pod still waits for a sentinel: the reboot was not its own', () => {
    const waiting = rebootPod('Running', { restartCount: 1, runningSinceMs: MARKER_CHECK_GRACE_MS + 1000 });
    expect(judgeFailedJob(input({ rebootPod: waiting }))).toBe('failed');
  });

  it('failed once the reboot timeout has passed', () => {
    expect(judgeFailedJob(input({ deadline: NOW }))).toBe('failed');
  });
});

describe("the reboot pod's word before the job runner retries an attempt", () => {
  const jobPod = (phase: string): V1Pod => ({ metadata: { name: 'j-0' }, status: { phase } });

  it('holds or completes a failed attempt the reboot may have cut off', () => {
    expect(lostAttemptWord(input({}), [jobPod('Failed')], 'j')).toEqual({ verdict: 'wait' });
    expect(lostAttemptWord(input({ rebootPod: rebootPod('Succeeded') }), [jobPod('Failed')], 'j')).toEqual({
      verdict: 'succeeded',
      message: expect.stringContaining("Job j's pod was cut off by the node's reboot after its last step succeeded"),
    });
  });

  it('says nothing of a plain failure (no reboot), nor while an attempt runs or none has failed', () => {
    expect(lostAttemptWord(input({ node: nodeWithBoot('boot-1') }), [jobPod('Failed')], 'j')).toBeUndefined();
    expect(lostAttemptWord(input({}), [jobPod('Failed'), jobPod('Running')], 'j')).toBeUndefined();
    expect(lostAttemptWord(input({ rebootPod: rebootPod('Succeeded') }), [], 'j')).toBeUndefined();
  });
});
