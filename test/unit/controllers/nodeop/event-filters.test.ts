/**
 * Which Job and pod events wake a NodeOp: the ones a stage Job's routine life is made of (counts,
 * scheduling, init containers, Running) do not; a finish, a failure, a stuck wait, a deletion, a
 * suspension or a new owner does.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { NodeOp } from '../../../../src/api/nodeop.js';
import {
  isOnlyFinish,
  jobChanged,
  mayStartNodes,
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
  const running = job({ active: 1 });
  const criteria = job({ conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }] });
  const complete = job({
    conditions: [
      { type: 'SuccessCriteriaMet', status: 'True' },
      { type: 'Complete', status: 'True', reason: 'CompletionsReached' },
    ],
  });

  it('is news when it succeeds, and when it finishes (a slot frees), not in between', () => {
    expect(jobChanged(criteria, running)).toBe(true);
    expect(isOnlyFinish(criteria, running)).toBe(false);
    expect(jobChanged(complete, criteria)).toBe(true);
    expect(isOnlyFinish(complete, criteria)).toBe(true);
  });

  it('once its pod succeeded (the pod event woke the NodeOp), only its finish is news', () => {
    expect(jobChanged(criteria, running, true)).toBe(false);
    expect(jobChanged(complete, running, true)).toBe(true);
    expect(isOnlyFinish(complete, running, true)).toBe(true);
    expect(isOnlyFinish(complete, criteria, true)).toBe(true);
  });

  it('a failure is more than a finish; the Failed after FailureTarget only a finish', () => {
    const target = job({ conditions: [{ type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded' }] });
    const failed = job({
      conditions: [
        { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded' },
        { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' },
      ],
    });
    expect(jobChanged(target, running, true)).toBe(true);
    expect(isOnlyFinish(target, running)).toBe(false);
    expect(isOnlyFinish(failed, target)).toBe(true);
    expect(isOnlyFinish(failed, running)).toBe(false);
    expect(isOnlyFinish(job({ active: 1 }, { suspend: true }), running)).toBe(false);
  });

  it('a finish matters to a NodeOp that may still start a node', () => {
    const op = (targetNodes: string[] | undefined, started: string[]): NodeOp =>
      ({
        metadata: { name: 'op' },
        spec: targetNodes ? { targetNodes } : { nodeSelector: {} },
        status: { nodeStatuses: Object.fromEntries(started.map((n) => [n, { phase: 'Completed' }])) },
      }) as NodeOp;
    expect(mayStartNodes(op(['n1'], ['n1']))).toBe(false);
    expect(mayStartNodes(op(['n1', 'n2'], ['n1']))).toBe(true);
    expect(mayStartNodes(op(undefined, ['n1']))).toBe(true);
    expect(mayStartNodes(undefined)).toBe(true);
    // The entries after a reconcile (a node just started, its entry not written yet) count too.
    expect(mayStartNodes(op(['n1'], []), { n1: { phase: 'Completed' } })).toBe(false);
    expect(mayStartNodes(op(['n1'], []))).toBe(true);
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
