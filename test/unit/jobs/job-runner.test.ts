/** The rules of the stage Jobs the NodeOp controller runs itself (pure): jobs/job-runner/. */
import { describe, expect, it } from '@jest/globals';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { NODEOP_NAMES } from '../../../src/api/names.js';
import { buildJobPod, hasPodTemplate, jobPodName } from '../../../src/jobs/job-runner/job-pod.js';
import {
  attemptOf,
  isRunByNodeOpController,
  planJobRun,
  RETRY_BACKOFF_MAX_MS,
  retryDelayMs,
} from '../../../src/jobs/job-runner/run-plan.js';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const at = (seconds: number): number => T0 + seconds * 1000;

function job(spec: Partial<NonNullable<V1Job['spec']>> = {}, status: V1Job['status'] = {}, deleting = false): V1Job {
  return {
    metadata: {
      name: 'stage',
      namespace: 'ns',
      uid: 'job-uid',
      ...(deleting ? { deletionTimestamp: new Date(T0) } : {}),
    },
    spec: { managedBy: NODEOP_NAMES.jobManager, backoffLimit: 2, template: {}, ...spec },
    status,
  };
}

function pod(attempt: number, phase: string, createdS: number, finishedS?: number, deleting = false): V1Pod {
  return {
    metadata: {
      name: jobPodName('stage', attempt),
      creationTimestamp: new Date(at(createdS)),
      ...(deleting ? { deletionTimestamp: new Date(at(createdS + 1)) } : {}),
    },
    status: {
      phase,
      ...(finishedS === undefined
        ? {}
        : {
            containerStatuses: [
              {
                name: 'nodeop',
                image: 'i',
                imageID: '',
                ready: false,
                restartCount: 0,
                state: {
                  terminated: {
                    exitCode: phase === 'Succeeded' ? 0 : 1,
                    finishedAt: new Date(at(finishedS)),
                  },
                },
              },
            ],
          }),
    },
  };
}

const conditionTypes = (plan: ReturnType<typeof planJobRun>): string[] =>
  (plan.status?.conditions ?? []).map((c) => `${c.type}:${c.reason ?? ''}`);

describe('planJobRun', () => {
  it('creates the first attempt of a fresh Job, and nothing else', () => {
    expect(planJobRun(job(), [], at(0))).toEqual({ deletePods: [], createAttempt: 0 });
  });

  it('waits while its pod runs, and looks again at the active deadline', () => {
    const plan = planJobRun(job({ activeDeadlineSeconds: 30 }), [pod(0, 'Running', 0)], at(5));
    expect(plan).toMatchObject({ deletePods: [], recheckAt: at(30) });
    expect(plan.createAttempt).toBeUndefined();
    expect(plan.status).toBeUndefined();
  });

  it("completes on a succeeded pod with the status the API server requires, at the pod's finish", () => {
    const plan = planJobRun(job(), [pod(0, 'Succeeded', 0, 7)], at(9));
    expect(plan.status).toMatchObject({
      succeeded: 1,
      failed: 0,
      active: 0,
      ready: 0,
      terminating: 0,
      uncountedTerminatedPods: {},
      startTime: new Date(at(0)),
      completionTime: new Date(at(7)),
    });
    expect(conditionTypes(plan)).toEqual(['SuccessCriteriaMet:CompletionsReached', 'Complete:CompletionsReached']);
    // Written again after a restart, later: the same status (completionTime may never change).
    expect(planJobRun(job(), [pod(0, 'Succeeded', 0, 7)], at(600)).status).toEqual(plan.status);
  });

  it('never completes before it started (a node clock behind the API server)', () => {
    const plan = planJobRun(job(), [pod(0, 'Succeeded', 10, 8)], at(12));
    expect(plan.status?.completionTime).toEqual(new Date(at(10)));
  });

  it('records a failure, retries after 10 s, then 20 s, and fails once more than backoffLimit failed', () => {
    const first = [pod(0, 'Failed', 0, 3)];
    expect(planJobRun(job(), first, at(4))).toMatchObject({ status: { failed: 1 }, recheckAt: at(13) });
    expect(planJobRun(job({}, { failed: 1 }), first, at(13))).toEqual({ deletePods: [], createAttempt: 1 });

    const second = [...first, pod(1, 'Failed', 13, 15)];
    expect(planJobRun(job({}, { failed: 1 }), second, at(16))).toMatchObject({
      status: { failed: 2 },
      recheckAt: at(35),
    });
    expect(planJobRun(job({}, { failed: 2 }), second, at(35)).createAttempt).toBe(2);

    const third = [...second, pod(2, 'Failed', 35, 36)];
    const failed = planJobRun(job({}, { failed: 2 }), third, at(37));
    expect(conditionTypes(failed)).toEqual(['FailureTarget:BackoffLimitExceeded', 'Failed:BackoffLimitExceeded']);
    expect(failed.status).toMatchObject({ failed: 3, startTime: new Date(at(0)), active: 0 });
    expect(failed.status?.completionTime).toBeUndefined();
    expect(failed.createAttempt).toBeUndefined();
  });

  it('fails at once with backoffLimit 0', () => {
    const plan = planJobRun(job({ backoffLimit: 0 }), [pod(0, 'Failed', 0, 3)], at(4));
    expect(conditionTypes(plan)).toEqual(['FailureTarget:BackoffLimitExceeded', 'Failed:BackoffLimitExceeded']);
  });

  describe("an attempt the node's own reboot may have cut off (the reboot pod's word)", () => {
    const lostPods = [pod(0, 'Failed', 0, 3)];
    const cutOff = {
      verdict: 'succeeded',
      message: 'pod stage-0 was cut off by the reboot after its last step',
    } as const;

    it('is not retried while the reboot pod has not spoken, nor failed at the backoff limit', () => {
      const waiting = planJobRun(job({}, { failed: 1 }), lostPods, at(60), undefined, { verdict: 'wait' });
      expect(waiting).toEqual({ deletePods: [] });
      const atLimit = planJobRun(job({ backoffLimit: 0 }), lostPods, at(4), undefined, { verdict: 'wait' });
      expect(atLimit).toEqual({ deletePods: [], status: { failed: 1 } });
    });

    it('completes the Job, never re-running its steps, when the reboot pod saw the sentinel', () => {
      for (const limit of [0, 2]) {
        const plan = planJobRun(job({ backoffLimit: limit }), lostPods, at(60), undefined, cutOff);
        expect(plan.createAttempt).toBeUndefined();
        expect(conditionTypes(plan)).toEqual(['SuccessCriteriaMet:CompletionsReached', 'Complete:CompletionsReached']);
        expect(plan.status).toMatchObject({ succeeded: 1, failed: 1, completionTime: new Date(at(3)) });
        expect(plan.status?.conditions?.[1]?.message).toBe(cutOff.message);
      }
    });

    it('is retried as usual without a word, and a running attempt is left alone whatever the word', () => {
      expect(planJobRun(job({}, { failed: 1 }), lostPods, at(60)).createAttempt).toBe(1);
      const running = [...lostPods, pod(1, 'Running', 13)];
      expect(planJobRun(job({}, { failed: 1 }), running, at(60), undefined, cutOff).status).toBeUndefined();
    });
  });

  it('counts failures by the attempts the failed pods carry, when older failed pods were deleted', () => {
    // Attempt 3 failed; its predecessors are gone and the count was never written: 4 failures.
    const plan = planJobRun(job({ backoffLimit: 6 }), [pod(3, 'Failed', 0, 1)], at(100));
    expect(plan.status).toEqual({ failed: 4 });
    expect(plan.createAttempt).toBe(4);
  });

  it('ends a Job past its active deadline: its pod goes and it fails (DeadlineExceeded)', () => {
    const plan = planJobRun(job({ activeDeadlineSeconds: 30 }), [pod(0, 'Running', 0)], at(30));
    expect(plan.deletePods).toEqual(['stage-0']);
    expect(conditionTypes(plan)).toEqual(['FailureTarget:DeadlineExceeded', 'Failed:DeadlineExceeded']);
  });

  it('waits for the deadline, not a retry past it', () => {
    const plan = planJobRun(job({ activeDeadlineSeconds: 12 }), [pod(0, 'Failed', 0, 5)], at(6));
    expect(plan).toMatchObject({ recheckAt: at(12) });
    expect(plan.createAttempt).toBeUndefined();
  });

  it('keeps a suspended Job without a running pod, and does not count the deleted pod as a failure', () => {
    expect(planJobRun(job({ suspend: true }), [pod(0, 'Running', 0)], at(5))).toEqual({ deletePods: ['stage-0'] });
    expect(planJobRun(job({ suspend: true }), [], at(6))).toEqual({ deletePods: [] });
    // Resumed while the deleted pod still terminates: wait for it, then the same attempt again.
    expect(planJobRun(job(), [pod(0, 'Running', 0, undefined, true)], at(7))).toEqual({ deletePods: [] });
    expect(planJobRun(job(), [], at(8))).toEqual({ deletePods: [], createAttempt: 0 });
  });

  it('ends a Job on request (a stuck pod): its pod goes and it fails with the given reason', () => {
    const plan = planJobRun(job(), [pod(0, 'Pending', 0)], at(70), { reason: 'PodStuck', message: 'ImagePullBackOff' });
    expect(plan.deletePods).toEqual(['stage-0']);
    expect(conditionTypes(plan)).toEqual(['FailureTarget:PodStuck', 'Failed:PodStuck']);
    expect(plan.status?.conditions?.[1]?.message).toBe('ImagePullBackOff');
  });

  it('only cleans up after a Job that ended, and leaves a Job being deleted alone', () => {
    const ended = job({}, { conditions: [{ type: 'Failed', status: 'True' }] });
    expect(planJobRun(ended, [pod(0, 'Running', 0)], at(5))).toEqual({ deletePods: ['stage-0'] });
    expect(planJobRun(job({}, {}, true), [pod(0, 'Running', 0)], at(5))).toEqual({ deletePods: [] });
  });
});

describe('retryDelayMs', () => {
  it('doubles from 10 s up to 6 minutes', () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([10_000, 20_000, 40_000, 80_000]);
    expect(retryDelayMs(20)).toBe(RETRY_BACKOFF_MAX_MS);
  });
});

describe('attemptOf and the Job pod', () => {
  it('reads the attempt from the names this controller gives, and nothing else', () => {
    expect(attemptOf('stage', pod(12, 'Running', 0))).toBe(12);
    expect(attemptOf('stage', { metadata: { name: 'stage-x7k2p' } })).toBeUndefined();
    expect(attemptOf('stage', { metadata: { name: 'other-1' } })).toBeUndefined();
  });

  it("is the Job's stored template, owned by the Job as its controller", () => {
    const full = job({
      template: {
        metadata: { labels: { 'batch.kubernetes.io/job-name': 'stage' }, annotations: { a: 'b' } },
        spec: { nodeName: 'n1', restartPolicy: 'Never', containers: [{ name: 'nodeop', image: 'i' }] },
      },
    });
    expect(hasPodTemplate(full)).toBe(true);
    expect(hasPodTemplate(job())).toBe(false);
    const built = buildJobPod(full, 2);
    expect(built.metadata).toMatchObject({
      name: 'stage-2',
      namespace: 'ns',
      labels: { 'batch.kubernetes.io/job-name': 'stage' },
      annotations: { a: 'b' },
      ownerReferences: [{ kind: 'Job', name: 'stage', uid: 'job-uid', controller: true, blockOwnerDeletion: true }],
    });
    expect(built.metadata?.finalizers).toBeUndefined();
    expect(built.spec?.nodeName).toBe('n1');
    expect(() => buildJobPod(job(), 0)).toThrow(/no pod template/);
  });

  it('recognises only the Jobs whose spec.managedBy is ours', () => {
    expect(isRunByNodeOpController(job())).toBe(true);
    expect(isRunByNodeOpController(job({ managedBy: 'kubernetes.io/job-controller' }))).toBe(false);
    expect(isRunByNodeOpController({ spec: { template: {} } })).toBe(false);
  });
});
