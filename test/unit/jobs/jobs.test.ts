/** Drain rules and Job progress (pure). */
import { describe, expect, it } from '@jest/globals';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { planDrain, podRef } from '../../../src/jobs/drain-plan.js';
import { jobProgress } from '../../../src/jobs/job-progress.js';

function pod(
  name: string,
  extra: { owner?: string; emptyDir?: boolean; mirror?: boolean; phase?: string; labels?: Record<string, string> } = {},
): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      ...(extra.owner
        ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: extra.owner, name: 'o', uid: 'u', controller: true }] }
        : {}),
      ...(extra.mirror ? { annotations: { 'kubernetes.io/config.mirror': 'x' } } : {}),
      ...(extra.labels ? { labels: extra.labels } : {}),
    },
    spec: { containers: [], ...(extra.emptyDir ? { volumes: [{ name: 'scratch', emptyDir: {} }] } : {}) },
    status: { phase: extra.phase ?? 'Running' },
  };
}

describe('planDrain', () => {
  const pods = [
    pod('web', { owner: 'ReplicaSet' }),
    pod('agent', { owner: 'DaemonSet' }),
    pod('static', { mirror: true }),
    pod('done', { owner: 'ReplicaSet', phase: 'Succeeded' }),
    pod('ours', { owner: 'Job', labels: { mine: 'yes' } }),
  ];
  const exempt = (p: V1Pod): boolean => p.metadata?.labels?.['mine'] === 'yes';

  it('evicts controller-owned pods and skips DaemonSet, mirror, finished and exempt pods', () => {
    const plan = planDrain(pods, {}, exempt);
    expect(plan.evict.map(podRef)).toEqual(['ns/web']);
    expect(plan.refused).toEqual([]);
  });

  it('refuses pods without a controller unless force, and emptyDir pods unless deleteEmptyDirData', () => {
    const risky = [pod('bare'), pod('cache', { owner: 'ReplicaSet', emptyDir: true })];
    expect(planDrain(risky, {}, exempt).refused.map((r) => [podRef(r.pod), r.why])).toEqual([
      ['ns/bare', expect.stringContaining('drainOptions.force')],
      ['ns/cache', expect.stringContaining('drainOptions.deleteEmptyDirData')],
    ]);
    expect(planDrain(risky, { force: true, deleteEmptyDirData: true }, exempt).evict.map(podRef)).toEqual([
      'ns/bare',
      'ns/cache',
    ]);
  });

  it('waits for a finished pod that is being deleted (an evicted pod the kubelet has not removed yet)', () => {
    const evicted = pod('evicted', { owner: 'ReplicaSet', phase: 'Failed' });
    evicted.metadata!.deletionTimestamp = new Date('2026-01-01T00:00:00Z');
    expect(planDrain([...pods, evicted], {}, exempt).evict.map(podRef)).toEqual(['ns/web', 'ns/evicted']);
  });

  it('refuses DaemonSet pods when ignoreDaemonSets is false', () => {
    expect(planDrain(pods, { ignoreDaemonSets: false }, exempt).refused.map((r) => podRef(r.pod))).toEqual([
      'ns/agent',
    ]);
  });
});

describe('jobProgress', () => {
  const job = (conditions: { type: string; reason?: string; message?: string }[] = [], failed = 0): V1Job => ({
    metadata: { name: 'j' },
    status: { failed, conditions: conditions.map((c) => ({ ...c, status: 'True' })) },
  });
  const created = '2030-01-01T00:00:00Z';
  const t0 = Date.parse(created);
  const pulling: V1Pod = {
    metadata: { name: 'j-abc', creationTimestamp: new Date(created) },
    spec: { containers: [] },
    status: {
      phase: 'Pending',
      initContainerStatuses: [
        {
          name: 'nodeop',
          image: 'x.invalid/y',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image x.invalid/y' } },
        },
      ],
    },
  };

  it('reads success and failure from the Job conditions, naming the failed container and exit code', () => {
    expect(jobProgress(job([{ type: 'Complete' }]), [], t0, 1000).state).toBe('succeeded');
    const failedPod: V1Pod = {
      metadata: { name: 'j-x' },
      status: {
        phase: 'Failed',
        containerStatuses: [
          {
            name: 'nodeop',
            image: 'i',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 3, reason: 'Error' } },
          },
        ],
      },
    };
    const progress = jobProgress(
      job(
        [{ type: 'Failed', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }],
        1,
      ),
      [failedPod],
      t0,
      1000,
    );
    expect(progress).toEqual({
      state: 'failed',
      restarts: 1,
      message:
        'Job j failed (BackoffLimitExceeded: Job has reached the specified backoff limit); pod j-x: container nodeop exited with code 3 (Error)',
    });
  });

  it("takes a succeeded pod as the Job's success before the Job controller records it, but not a failed attempt", () => {
    const earlier = pod('j-1', { phase: 'Failed' });
    const done = pod('j-2', { phase: 'Succeeded' });
    expect(jobProgress(job([], 1), [earlier, done], t0, 1000)).toEqual({
      state: 'succeeded',
      restarts: 1,
      message: 'Job j completed successfully (pod j-2 succeeded)',
    });
    expect(jobProgress(job([], 1), [earlier, pod('j-2')], t0, 1000).state).toBe('running');
  });

  it('reports a suspended Job as running (held), not stuck', () => {
    const suspended: V1Job = { ...job(), spec: { suspend: true, template: {} } };
    expect(jobProgress(suspended, [], t0, 1000)).toEqual({
      state: 'running',
      restarts: 0,
      message: 'Job j is suspended',
    });
  });

  it('reports ImagePullBackOff as waiting, then as stuck once it lasted the allowed time', () => {
    const early = jobProgress(job(), [pulling], t0 + 5_000, 60_000);
    expect(early.state).toBe('running');
    expect(early.message).toContain('ImagePullBackOff');
    const late = jobProgress(job(), [pulling], t0 + 60_000, 60_000);
    expect(late.state).toBe('stuck');
    expect(late.message).toMatch(/container nodeop: ImagePullBackOff: Back-off pulling image x.invalid\/y/);
    // ...and says what to do about it.
    expect(late.message).toContain(
      "; check that the image exists at that tag or digest (the package's image and version or containerSHA, or agentImageOverride) and that imagePullSecrets grant access (for 60s)",
    );
  });
});
