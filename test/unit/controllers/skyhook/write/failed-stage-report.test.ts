/**
 * The failed-stage Event's text (what `kubectl describe skyhook` shows): which container failed and
 * how, the log's last lines on one line, the newest lines kept when it is too long; and which
 * container of which pod is the failed one.
 */
import { describe, expect, it } from '@jest/globals';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { NodeOp } from '../../../../../src/api/nodeop.js';
import { silentLogger } from '../../../../../src/kube/logger.js';
import {
  describeFailedStage,
  failedContainerOf,
  failedStageMessage,
  LOG_LINES_READ,
  LOG_TAIL_LINES,
  MAX_EVENT_MESSAGE,
  withoutAgentBanner,
} from '../../../../../src/controllers/skyhook/write/failed-stage-report.js';
import { parseAgentArgs } from '../../../../../src/agent/args.js';
import { startupBanner } from '../../../../../src/agent/banner.js';
import { readSettings } from '../../../../../src/agent/settings.js';

const base = { package: 'dexter', version: '1.2.3', stage: 'apply', node: 'worker-1' };
const container = { pod: 'p', container: 'dexter-apply', exitCode: 2, reason: 'Error', message: 'simulated failure' };

describe('failedStageMessage', () => {
  it('names the package, stage, node and container exit, then the log tail on one line', () => {
    const message = failedStageMessage({ ...base, container, log: 'step 1 ok\nstep 2: disk full\n' });
    expect(message).toBe(
      'Package [dexter:1.2.3] stage [apply] failed on node [worker-1]: container dexter-apply exited with code 2 (Error: simulated failure); log tail: step 1 ok | step 2: disk full',
    );
  });

  it(`keeps only the last ${LOG_TAIL_LINES} lines`, () => {
    const log = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const message = failedStageMessage({ ...base, container, log });
    expect(message).toContain(`line ${30 - LOG_TAIL_LINES} | `);
    expect(message).not.toContain(`line ${29 - LOG_TAIL_LINES} |`);
    expect(message.endsWith('line 29')).toBe(true);
  });

  it(`stays within ${MAX_EVENT_MESSAGE} characters and keeps the newest output`, () => {
    const log = `${Array.from({ length: 10 }, (_, i) => `${i}:${'x'.repeat(300)}`).join('\n')}\nthe actual error`;
    const message = failedStageMessage({ ...base, container, log });
    expect(message.length).toBeLessThanOrEqual(MAX_EVENT_MESSAGE);
    expect(message).toContain('; log tail: …');
    expect(message.endsWith('the actual error')).toBe(true);
  });

  it("falls back to the NodeOp's summary without a failed container, and to the exit alone without a log", () => {
    expect(failedStageMessage({ ...base, summary: 'Job j failed (DeadlineExceeded)' })).toBe(
      'Package [dexter:1.2.3] stage [apply] failed on node [worker-1]: Job j failed (DeadlineExceeded)',
    );
    expect(failedStageMessage({ ...base, container: { pod: 'p', container: 'c', exitCode: 1 }, log: '\n' })).toBe(
      'Package [dexter:1.2.3] stage [apply] failed on node [worker-1]: container c exited with code 1',
    );
  });
});

describe('failedContainerOf', () => {
  const pod = (name: string, created: string, init: { name: string; exitCode?: number; last?: number }[]): V1Pod => ({
    metadata: { name, creationTimestamp: new Date(created) },
    status: {
      initContainerStatuses: init.map((c) => ({
        name: c.name,
        image: 'i',
        imageID: '',
        ready: false,
        restartCount: 0,
        ...(c.exitCode !== undefined
          ? { state: { terminated: { exitCode: c.exitCode, reason: c.exitCode ? 'Error' : 'Completed' } } }
          : {}),
        ...(c.last !== undefined ? { lastState: { terminated: { exitCode: c.last } } } : {}),
      })),
    },
  });

  it('picks the first non-zero exit of the newest failed pod', () => {
    const older = pod('old', '2026-01-01T00:00:00Z', [
      { name: 'init', exitCode: 0 },
      { name: 'apply', exitCode: 3 },
    ]);
    const newer = pod('new', '2026-01-01T00:01:00Z', [
      { name: 'init', exitCode: 0 },
      { name: 'apply', exitCode: 2 },
      { name: 'applycheck' },
    ]);
    expect(failedContainerOf([older, newer])).toEqual({ pod: 'new', container: 'apply', exitCode: 2, reason: 'Error' });
  });

  it("reads a restarted container's last termination, and finds nothing when all exits were 0", () => {
    expect(failedContainerOf([pod('p', '2026-01-01T00:00:00Z', [{ name: 'apply', last: 5 }])])).toMatchObject({
      container: 'apply',
      exitCode: 5,
    });
    expect(failedContainerOf([pod('p', '2026-01-01T00:00:00Z', [{ name: 'apply', exitCode: 0 }])])).toBeUndefined();
  });
});

describe('describeFailedStage', () => {
  it("does not look at the pods of a Job ended as stuck: their exits were ours, the NodeOp's message is the cause", async () => {
    let listed = false;
    const core = {
      listNamespacedPod: async () => {
        listed = true;
        return { items: [] };
      },
    } as unknown as CoreV1Api;
    const summary =
      'Job j cannot make progress: pod p container c: ImagePullBackOff: Back-off pulling image registry.invalid/pkg:1.0.0; check that the image exists (for 15s)';
    const nodeOp = {
      metadata: { name: 'op', namespace: 'skyhook' },
      spec: {
        command: ['true'],
        targetNodes: ['worker-1'],
        skyhookStage: {
          skyhook: 's',
          stage: 'apply',
          package: { name: 'dexter', version: '1.2.3', image: 'registry.invalid/pkg' },
        },
      },
      status: { nodeStatuses: { 'worker-1': { phase: 'Failed', jobName: 'j', message: summary } } },
    } as unknown as NodeOp;
    const failed = await describeFailedStage(core, nodeOp, silentLogger());
    expect(listed).toBe(false);
    expect(failedStageMessage(failed)).toBe(
      `Package [dexter:1.2.3] stage [apply] failed on node [worker-1]: ${summary}`,
    );
  });
});

describe("the agent's start-up banner", () => {
  const banner = startupBanner(parseAgentArgs(['apply', '/root', '/root/var/lib/skyhook/p']), readSettings({}));
  const run = [
    "WARNING:root: shellscript_run_check.sh doesn't exist. Checks ensure that all tasks in the step will complete.",
    "apply shellscript_run.sh ['apply'] [0] Idempotence.Disabled True",
    '[out]2026-11-24T07:54:25.151000 cannot tune: /proc/sys/vm/nr_hugepages is busy',
    '[out]2026-11-24T07:54:25.151000 FAILED: shellscript_run.sh apply 3',
  ];

  it('is left out of the tail, so a step that prints one line is not outnumbered by it', () => {
    const message = failedStageMessage({ ...base, container, log: `${banner}${run.join('\n')}\n` });
    expect(message.endsWith(`log tail: ${run.join(' | ')}`)).toBe(true);
    expect(withoutAgentBanner(banner.trimEnd().split('\n'))).toEqual([]);
  });

  it('keeps an error that reached the log before the banner (stderr before stdout on a busy node)', () => {
    const error = [
      'ERROR:root:invalid package:',
      "  /root/var/lib/skyhook/p/config.json: Expected property name or '}' in JSON at position 35",
    ];
    const log = `${error.join('\n')}\n${banner}`;
    expect(withoutAgentBanner(log.trimEnd().split('\n'))).toEqual(error);
    expect(failedStageMessage({ ...base, container, log }).endsWith(`log tail: ${error.join(' | ')}`)).toBe(true);
  });

  it('leaves a log without it alone', () => {
    expect(withoutAgentBanner(run)).toEqual(run);
  });
});

describe('describeFailedStage reading the log', () => {
  const failedPod = (name: string, created: string): V1Pod => ({
    metadata: { name, creationTimestamp: new Date(created) },
    status: {
      initContainerStatuses: [
        { name: 'dexter-apply', state: { terminated: { exitCode: 1, reason: 'Error' } } },
      ] as NonNullable<V1Pod['status']>['initContainerStatuses'],
    },
  });
  const nodeOp = {
    metadata: { name: 'op', namespace: 'skyhook' },
    spec: {
      command: ['true'],
      targetNodes: ['worker-1'],
      skyhookStage: { skyhook: 's', stage: 'apply', package: { name: 'dexter', version: '1.2.3', image: 'i' } },
    },
    status: { nodeStatuses: { 'worker-1': { phase: 'Failed', jobName: 'j' } } },
  } as unknown as NodeOp;

  it("takes an older attempt's log when the kubelet no longer has the newest one's", async () => {
    const read: { name: string; tailLines: number }[] = [];
    const core = {
      listNamespacedPod: async () => ({
        items: [failedPod('first', '2026-01-01T00:00:00Z'), failedPod('last', '2026-01-01T00:01:00Z')],
      }),
      readNamespacedPodLog: async (request: { name: string; tailLines: number }) => {
        read.push(request);
        if (request.name === 'last') throw new Error('unable to retrieve container logs');
        return 'disk full\n';
      },
    } as unknown as CoreV1Api;
    const failed = await describeFailedStage(core, nodeOp, silentLogger());
    expect(read.map((r) => r.name)).toEqual(['last', 'first']);
    expect(read[0]!.tailLines).toBe(LOG_LINES_READ);
    expect(failed.container).toMatchObject({ pod: 'first', container: 'dexter-apply', exitCode: 1 });
    expect(failedStageMessage(failed).endsWith('log tail: disk full')).toBe(true);
  });

  it('takes the log tail the kubelet saved in the status when no log file is left', async () => {
    const saved = 'agent banner\ninvalid package: config.json\nFix: publish a valid image\n';
    const withSaved = (pod: V1Pod): V1Pod => {
      const status = pod.status!.initContainerStatuses![0]!;
      status.state!.terminated!.message = saved;
      return pod;
    };
    const core = {
      listNamespacedPod: async () => ({
        items: [failedPod('first', '2026-01-01T00:00:00Z'), withSaved(failedPod('last', '2026-01-01T00:01:00Z'))],
      }),
      readNamespacedPodLog: async () => {
        throw new Error('container not found');
      },
    } as unknown as CoreV1Api;
    const failed = await describeFailedStage(core, nodeOp, silentLogger());
    expect(failed.container).toMatchObject({ pod: 'last', exitCode: 1 });
    // The saved tail is the log, not part of the exit: it is shown once, on one line.
    expect(failedStageMessage(failed)).toBe(
      'Package [dexter:1.2.3] stage [apply] failed on node [worker-1]: container dexter-apply exited with code 1 (Error); ' +
        'log tail: agent banner | invalid package: config.json | Fix: publish a valid image',
    );
  });

  it("prefers the newest attempt's saved tail to an older attempt's log", async () => {
    const newest = failedPod('last', '2026-01-01T00:01:00Z');
    newest.status!.initContainerStatuses![0]!.state!.terminated!.message = 'run 2\nfailed again\n';
    const core = {
      listNamespacedPod: async () => ({ items: [failedPod('first', '2026-01-01T00:00:00Z'), newest] }),
      readNamespacedPodLog: async (request: { name: string }) => {
        if (request.name === 'last') return '';
        return 'run 1\n';
      },
    } as unknown as CoreV1Api;
    const failed = await describeFailedStage(core, nodeOp, silentLogger());
    expect(failedStageMessage(failed).endsWith('log tail: run 2 | failed again')).toBe(true);
  });
});
