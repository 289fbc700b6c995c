/**
 * Which Job and pod events wake a NodeOp: the ones a stage Job's routine life is made of (counts,
 * scheduling, init containers, Running) do not; a finish, a failure, a stuck wait, a deletion, a
 * suspension or a new owner does.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import {
  isJobSettled,
  jobChanged,
  jobHasNews,
  podChanged,
  podHasNews,
} from '../../../../src/controllers/nodeop/event-filters.js';

const job = (status: V1Job['status'] = {}, spec: Partial<NonNullable<V1Job['spec']>> = {}): V1Job => ({
  metadata: {
    name: 'j',
    namespace: 'ns',
    ownerReferences: [{ apiVersion: 'v', kind: 'NodeOp', name: 'op', uid: 'u' }],
  },
  spec: { template: {}, ...spec },
  status,
});
const pod = (status: V1Pod['status'] = {}, metadata: V1Pod['metadata'] = {}): V1Pod => ({
  metadata: { name: 'p', namespace: 'ns', labels: { 'job-name': 'j' }, ...metadata },
  status,
});
const done = (exitCode: number) => ({ terminated: { exitCode, reason: exitCode ? 'Error' : 'Completed' } });

describe('Job events', () => {
  it('a new Job is news only when something already happened to it', () => {
    expect(jobHasNews(job())).toBe(false);
    expect(jobHasNews(job({ active: 1 }))).toBe(false);
    expect(jobHasNews(job({ failed: 1 }))).toBe(true);
    expect(jobHasNews(job({ conditions: [{ type: 'Complete', status: 'True' }] }))).toBe(true);
  });

  it('routine count and time changes are not news; conditions, failures, suspend, retention and owners are', () => {
    const base = job({ active: 1 });
    expect(jobChanged(job({ active: 1, ready: 1, startTime: new Date() }), base)).toBe(false);
    expect(jobChanged(job({ active: 0, succeeded: 1, terminating: 0 }), base)).toBe(false);
    expect(jobChanged(job({ conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }] }), base)).toBe(true);
    expect(jobChanged(job({ conditions: [{ type: 'Failed', status: 'False' }] }), base)).toBe(false);
    expect(jobChanged(job({ failed: 1, active: 1 }), base)).toBe(true);
    expect(jobChanged(job({ active: 1 }, { suspend: true }), base)).toBe(true);
    expect(jobChanged(job({ active: 1 }, { ttlSecondsAfterFinished: 60 }), base)).toBe(true);
    const moved = { ...base, metadata: { ...base.metadata, ownerReferences: [] } };
    expect(jobChanged(moved, base)).toBe(true);
  });
});

describe('a Job that succeeded', () => {
  const criteria = job({ conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }] });
  const complete = job({
    conditions: [
      { type: 'SuccessCriteriaMet', status: 'True' },
      { type: 'Complete', status: 'True', reason: 'CompletionsReached' },
    ],
  });

  it('says so once: Complete after SuccessCriteriaMet is no news', () => {
    expect(jobChanged(criteria, job({ active: 1 }))).toBe(true);
    expect(jobChanged(complete, criteria)).toBe(false);
    expect(jobChanged(job({ conditions: [{ type: 'Complete', status: 'True' }] }), job({ active: 1 }))).toBe(true);
  });

  it('is no news at all once its pod succeeded (the pod event woke the NodeOp); a failure still is', () => {
    expect(jobChanged(criteria, job({ active: 1 }), true)).toBe(false);
    expect(jobChanged(complete, job({ active: 1 }), true)).toBe(false);
    const failed = job({ failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] });
    expect(jobChanged(failed, job({ active: 1 }), true)).toBe(true);
    expect(jobChanged(job({ active: 1 }, { suspend: true }), job({ active: 1 }), true)).toBe(true);
  });

  it('is settled (frees its slot) once finished, SuccessCriteriaMet, or its pod succeeded, not while failing', () => {
    expect(isJobSettled(job({ active: 1 }), [pod({ phase: 'Running' })])).toBe(false);
    expect(isJobSettled(job({ active: 1 }), [pod({ phase: 'Succeeded' })])).toBe(true);
    expect(isJobSettled(job({ active: 1 }), [pod({ phase: 'Succeeded' }, { deletionTimestamp: new Date() })])).toBe(
      false,
    );
    expect(isJobSettled(criteria, [])).toBe(true);
    expect(isJobSettled(complete, [])).toBe(true);
    expect(isJobSettled(job({ conditions: [{ type: 'FailureTarget', status: 'True' }] }), [])).toBe(false);
    expect(isJobSettled(job({ conditions: [{ type: 'Failed', status: 'True' }] }), [])).toBe(true);
  });
});

describe('pod events', () => {
  it('a new pending pod is no news; one already finished, failing or stuck is', () => {
    expect(podHasNews(pod())).toBe(false);
    expect(podHasNews(pod({ phase: 'Pending' }))).toBe(false);
    expect(podHasNews(pod({ phase: 'Succeeded' }))).toBe(true);
    expect(podHasNews(pod({ phase: 'Pending', initContainerStatuses: [stuck('ErrImagePull')] }))).toBe(true);
  });

  it("a stage pod's routine progress is not news: scheduled, init containers done, Running", () => {
    let before = pod({ phase: 'Pending' });
    const steps: V1Pod[] = [
      pod({
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: new Date(1) }],
      }),
      pod({ phase: 'Pending', initContainerStatuses: [{ ...container('copy'), state: done(0) }] }),
      pod({
        phase: 'Pending',
        initContainerStatuses: [
          { ...container('copy'), state: done(0) },
          { ...container('apply'), state: { running: {} } },
        ],
      }),
      pod({ phase: 'Running', containerStatuses: [{ ...container('pause'), state: { running: {} } }] }),
    ];
    for (const step of steps) {
      expect(podChanged(step, before)).toBe(false);
      before = step;
    }
  });

  it('finishing, a failed container, a stuck wait (and its clock), deletion and relabelling are news', () => {
    const running = pod({ phase: 'Running' });
    expect(podChanged(pod({ phase: 'Succeeded' }), running)).toBe(true);
    expect(podChanged(pod({ phase: 'Failed' }), running)).toBe(true);
    const failed = pod({ phase: 'Running', initContainerStatuses: [{ ...container('apply'), lastState: done(2) }] });
    expect(podChanged(failed, running)).toBe(true);
    const waiting = pod({ phase: 'Pending', initContainerStatuses: [stuck('ImagePullBackOff')] });
    expect(podChanged(waiting, running)).toBe(true);
    const later = pod({
      phase: 'Pending',
      initContainerStatuses: [stuck('ImagePullBackOff')],
      conditions: [{ type: 'Initialized', status: 'False', lastTransitionTime: new Date(5) }],
    });
    expect(podChanged(later, waiting)).toBe(true);
    expect(podChanged(pod({ phase: 'Running' }, { deletionTimestamp: new Date() }), running)).toBe(true);
    expect(podChanged(pod({ phase: 'Running' }, { labels: { 'job-name': 'other' } }), running)).toBe(true);
  });
});

function container(name: string) {
  return { name, image: 'i', imageID: '', ready: false, restartCount: 0 };
}

function stuck(reason: string) {
  return { ...container('apply'), state: { waiting: { reason, message: 'back-off pulling image' } } };
}
