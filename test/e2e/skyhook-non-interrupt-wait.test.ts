/**
 * Waits that free their slot (#16 item 4), through the real operator on simulated nodes: 4 nodes,
 * interruptionBudget count 2, a reboot package, and on the oldest node a pod that opts in with
 * `skyhook.nvidia.com/non-interruptible: "true"`. The other three complete without waiting for it
 * (never more than 2 cordoned), its wait has a start kept on the node across an operator restart, a
 * metric on /metrics, and a report-only warning past podNonInterruptWarnAfter; when the pod is
 * deleted the fourth node reboots and the Skyhook completes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import { nodeAnnotations, POD_ANNOTATIONS, SKYHOOK_CONDITIONS } from '../../src/api/names.js';
import type { Skyhook } from '../../src/api/skyhook.js';
import { waitForList } from '../../src/kube/wait.js';
import { recordNodeTimeline } from './node-timeline.js';
import {
  createGroupSkyhook,
  groupNodes,
  recordStageJobs,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';
import { eventually, metricsWith, scrapeMetrics } from './eventually.js';

const NODES = ['wait-0', 'wait-1', 'wait-2', 'wait-3'];
const HELD = 'wait-0';
const WORKLOADS = 'default';

let h: SkyhookHarness;

beforeAll(async () => {
  h = await startSkyhookHarness(groupNodes('wait', 4), { simulatedHost: {} });
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const readNode = (name: string): Promise<V1Node> => h.core.readNode({ name });
const annotation = (node: V1Node, key: string): string | undefined => node.metadata?.annotations?.[key];
const blocked = (scr: Skyhook) => scr.status?.conditions?.find((c) => c.type === SKYHOOK_CONDITIONS.blocked);

/** The value of `skyhook_node_non_interrupt_wait_seconds` for the held node, if there is a series. */
async function waitSeconds(): Promise<number | undefined> {
  const line = (await scrapeMetrics(h.manager()!.metricsPort))
    .split('\n')
    .find((l) => l.startsWith(`skyhook_node_non_interrupt_wait_seconds{skyhook_name="waits",node="${HELD}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('a node held by a non-interruptible pod', () => {
  it('frees its slot: the other three complete, its wait is measured and warned about, then it completes', async () => {
    await h.core.createNamespacedPod({
      namespace: WORKLOADS,
      body: {
        metadata: { name: 'training', annotations: { [POD_ANNOTATIONS.nonInterruptible]: 'true' } },
        spec: { nodeName: HELD, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    await waitForList<V1Pod>(
      h.cp.kubeConfig,
      `/api/v1/namespaces/${WORKLOADS}/pods`,
      (ps) => ps.some((p) => p.metadata?.name === 'training' && p.status?.phase === 'Running'),
      30_000,
      'training pod running',
    );
    const timeline = await recordNodeTimeline(h, NODES);
    const jobs = await recordStageJobs(h);
    await createGroupSkyhook(h, 'waits', 'wait', {
      interruptionBudget: { count: 2 },
      podNonInterruptWarnAfter: '8s',
      packages: {
        kernel: {
          version: '1.0.0',
          image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
          interrupt: { type: 'reboot' },
        },
      },
    });

    const others = NODES.filter((n) => n !== HELD);
    const othersDone = await waitForSkyhook(
      h,
      'waits',
      (s) => others.every((n) => s.status?.nodeStatus?.[n] === 'complete'),
      150_000,
    );
    expect(othersDone.status?.nodeStatus?.[HELD]).not.toBe('complete');
    const stages = jobs.stagesByNode('waits');
    for (const n of others) expect(stages[n]).toEqual(['apply', 'config', 'interrupt', 'post-interrupt']);
    expect(stages[HELD]).toBeUndefined();
    expect(timeline.maxCordoned()).toBeLessThanOrEqual(2);
    // The held node kept no slot: two of the others were cordoned at once, and it was cordoned (if at
    // all yet) only after two of them were done, when its slot would otherwise have stayed idle.
    const spans = others.flatMap((n) => timeline.spansOf(n));
    expect(
      spans.some((a) => spans.some((b) => a !== b && a.from < (b.to ?? Infinity) && b.from < (a.to ?? Infinity))),
    ).toBe(true);
    const ends = spans.map((span) => span.to ?? Infinity).sort((a, b) => a - b);
    for (const span of timeline.spansOf(HELD)) expect(span.from).toBeGreaterThanOrEqual(ends[1]!);

    const held = await readNode(HELD);
    const since = annotation(held, nodeAnnotations.nonInterruptWaitSince('waits'));
    expect(Number.isFinite(Date.parse(since ?? ''))).toBe(true);
    expect(annotation(held, nodeAnnotations.waiting('waits'))).toMatch(
      new RegExp(`^NonInterrupt(PodsRunning|WaitLong): ${WORKLOADS}/training`),
    );
    const measured = await waitSeconds();
    expect(measured).toBeGreaterThan(0);

    // Report-only warning: the condition's reason and an Event on the node, and the pod still runs.
    const warned = await waitForSkyhook(h, 'waits', (s) => blocked(s)?.reason === 'NonInterruptWaitLong', 60_000);
    expect(blocked(warned)?.message).toContain(`waited longer than podNonInterruptWarnAfter (${HELD})`);
    await waitForList<CoreV1Event>(
      h.cp.kubeConfig,
      '/api/v1/events',
      (all) => all.some((e) => e.reason === 'NonInterruptWaitLong' && e.involvedObject.name === HELD),
      30_000,
      'NonInterruptWaitLong event on the node',
    );
    const stillRunning = await h.core.readNamespacedPod({ name: 'training', namespace: WORKLOADS });
    expect(stillRunning.status?.phase).toBe('Running');

    // An operator restart keeps the wait's start, so the metric goes on counting from it.
    await h.stopOperator();
    await h.startOperator();
    const after = await eventually(waitSeconds, (seconds) => seconds !== undefined);
    expect(after).toBeGreaterThan(measured!);
    expect(annotation(await readNode(HELD), nodeAnnotations.nonInterruptWaitSince('waits'))).toBe(since);

    await h.core.deleteNamespacedPod({ name: 'training', namespace: WORKLOADS });
    const done = await waitForSkyhook(h, 'waits', (s) => s.status?.status === 'complete', 120_000);
    await jobs.stop();
    await timeline.stop();
    expect(blocked(done)?.status ?? 'False').toBe('False');
    expect(jobs.stagesByNode('waits')[HELD]).toEqual(['apply', 'config', 'interrupt', 'post-interrupt']);
    expect(timeline.maxCordoned()).toBeLessThanOrEqual(2);
    const node = await readNode(HELD);
    expect(node.spec?.unschedulable).toBeFalsy();
    expect(annotation(node, nodeAnnotations.nonInterruptWaitSince('waits'))).toBeUndefined();
    expect(annotation(node, nodeAnnotations.waiting('waits'))).toBeUndefined();
    const waitSeries = `skyhook_node_non_interrupt_wait_seconds{skyhook_name="waits",node="${HELD}"}`;
    const waitCount = 'skyhook_non_interrupt_wait_duration_seconds_count{skyhook_name="waits"} 1';
    const metrics = await metricsWith(h.manager()!.metricsPort, [waitCount], [waitSeries]);
    expect(metrics).not.toContain(waitSeries);
    expect(metrics).toContain(waitCount);
  }, 300_000);
});
