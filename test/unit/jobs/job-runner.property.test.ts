/**
 * The Job runner's rules on random histories (pure): pods finish, fail, are deleted by someone else,
 * the Job is suspended and resumed, time passes; the plan is applied as the controller applies it.
 * Whatever happens, a Job never has two pods running, never starts one while suspended or ended,
 * and its status always passes the API server's rules for a Job another controller manages
 * (batch/validation: terminal conditions with their interim ones, completion after start, counters
 * that never go down, a terminal condition and a completion time that never change).
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Job, V1JobStatus, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { NODEOP_NAMES } from '../../../src/api/names.js';
import { planJobRun } from '../../../src/jobs/job-runner/run-plan.js';

type Event =
  | { kind: 'time'; seconds: number }
  /** `skew`: the node's clock behind the API server's by this many seconds. */
  | { kind: 'finish'; succeeded: boolean; skew: number }
  | { kind: 'deleteByOther' }
  | { kind: 'gone' }
  | { kind: 'suspend'; suspend: boolean };

const event: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ kind: fc.constant('time' as const), seconds: fc.integer({ min: 1, max: 400 }) }),
  fc.record({ kind: fc.constant('finish' as const), succeeded: fc.boolean(), skew: fc.integer({ min: 0, max: 5 }) }),
  fc.constant({ kind: 'deleteByOther' as const }),
  fc.constant({ kind: 'gone' as const }),
  fc.record({ kind: fc.constant('suspend' as const), suspend: fc.boolean() }),
);

const T0 = Date.parse('2026-11-24T10:00:00Z');
const isTrue = (status: V1JobStatus, type: string): boolean =>
  (status.conditions ?? []).some((c) => c.type === type && c.status === 'True');
const unfinished = (p: V1Pod): boolean => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

/** The status as the API server would hold it after a merge patch of `patch` (conditions replace). */
function merged(status: V1JobStatus, patch: V1JobStatus): V1JobStatus {
  return { ...status, ...patch };
}

/** The API server's rules for a status write (pkg/apis/batch/validation, with JobManagedBy). */
function checkWrite(before: V1JobStatus, after: V1JobStatus): void {
  if (isTrue(after, 'Complete')) {
    expect(isTrue(after, 'SuccessCriteriaMet')).toBe(true);
    expect(isTrue(after, 'Failed')).toBe(false);
    expect(isTrue(after, 'FailureTarget')).toBe(false);
    expect(after.completionTime).toBeDefined();
    expect(after.startTime).toBeDefined();
    expect(new Date(after.completionTime!).getTime()).toBeGreaterThanOrEqual(new Date(after.startTime!).getTime());
    expect(after.active ?? 0).toBe(0);
  } else {
    expect(after.completionTime).toBeUndefined();
  }
  if (isTrue(after, 'Failed')) {
    expect(isTrue(after, 'FailureTarget')).toBe(true);
    expect(after.startTime).toBeDefined();
    expect(after.active ?? 0).toBe(0);
  }
  for (const type of ['Complete', 'Failed', 'FailureTarget', 'SuccessCriteriaMet'])
    if (isTrue(before, type)) expect(isTrue(after, type)).toBe(true);
  expect(after.failed ?? 0).toBeGreaterThanOrEqual(before.failed ?? 0);
  expect(after.succeeded ?? 0).toBeGreaterThanOrEqual(before.succeeded ?? 0);
  if (before.completionTime) expect(after.completionTime).toEqual(before.completionTime);
}

describe('planJobRun on random histories', () => {
  it('keeps one pod at a time, none while suspended or ended, and a status the API server accepts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.option(fc.integer({ min: 5, max: 600 }), { nil: undefined }),
        fc.array(event, { maxLength: 40 }),
        (backoffLimit, deadline, events) => {
          let now = T0;
          let suspend = false;
          let status: V1JobStatus = {};
          let pods: V1Pod[] = [];
          const job = (): V1Job => ({
            metadata: { name: 'stage', namespace: 'ns', uid: 'u' },
            spec: {
              managedBy: NODEOP_NAMES.jobManager,
              backoffLimit,
              suspend,
              template: {},
              ...(deadline === undefined ? {} : { activeDeadlineSeconds: deadline }),
            },
            status,
          });
          const step = (): void => {
            const ended = isTrue(status, 'Complete') || isTrue(status, 'Failed');
            const plan = planJobRun(job(), pods, now);
            pods = pods.map((p) =>
              plan.deletePods.includes(p.metadata?.name ?? '') && !p.metadata?.deletionTimestamp
                ? { ...p, metadata: { ...p.metadata, deletionTimestamp: new Date(now) } }
                : p,
            );
            if (plan.createAttempt !== undefined) {
              expect(suspend).toBe(false);
              expect(ended).toBe(false);
              const name = `stage-${plan.createAttempt}`;
              // The cache is exact here: a create of a pod that exists would be a wasted request.
              expect(pods.some((p) => p.metadata?.name === name)).toBe(false);
              pods.push({
                metadata: { name, creationTimestamp: new Date(now) },
                status: { phase: 'Pending' },
              });
            }
            if (plan.status) {
              expect(ended).toBe(false);
              const after = merged(status, plan.status);
              checkWrite(status, after);
              status = after;
            }
            if (plan.recheckAt !== undefined) expect(plan.recheckAt).toBeGreaterThan(now);
            // One pod at a time: at most one unfinished pod that nobody is deleting.
            expect(pods.filter((p) => unfinished(p) && !p.metadata?.deletionTimestamp).length).toBeLessThanOrEqual(1);
            // Attempts are not more than the failures allow (deletions by others are retried as the same attempt).
            const attempts = new Set(pods.map((p) => p.metadata?.name));
            expect(attempts.size).toBeLessThanOrEqual(backoffLimit + 1);
          };
          step();
          for (const e of events) {
            const live = pods.find((p) => unfinished(p) && !p.metadata?.deletionTimestamp);
            switch (e.kind) {
              case 'time':
                now += e.seconds * 1000;
                break;
              case 'finish':
                if (live) {
                  const phase = e.succeeded ? 'Succeeded' : 'Failed';
                  const terminated = { exitCode: e.succeeded ? 0 : 1, finishedAt: new Date(now - e.skew * 1000) };
                  pods = pods.map((p) =>
                    p === live
                      ? {
                          ...p,
                          status: {
                            phase,
                            containerStatuses: [
                              {
                                name: 'c',
                                image: 'i',
                                imageID: '',
                                ready: false,
                                restartCount: 0,
                                state: { terminated },
                              },
                            ],
                          },
                        }
                      : p,
                  );
                }
                break;
              case 'deleteByOther':
                if (live)
                  pods = pods.map((p) =>
                    p === live ? { ...p, metadata: { ...p.metadata, deletionTimestamp: new Date(now) } } : p,
                  );
                break;
              case 'gone':
                // Pods being deleted are gone once their containers stopped.
                pods = pods.filter((p) => !p.metadata?.deletionTimestamp);
                break;
              case 'suspend':
                suspend = e.suspend;
                break;
            }
            step();
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
