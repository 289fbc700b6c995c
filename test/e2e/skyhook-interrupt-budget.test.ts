/**
 * The interruptionBudget with interrupts, through the real operator and the simulated host: a
 * reboot package on 10 nodes never has more nodes cordoned (and so drained or rebooting) or in
 * progress at once than the budget allows, as watchers see it for the whole rollout, and every node
 * is rebooted exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { API_GROUP, API_VERSION, KINDS } from '../../src/api/names.js';
import type { SimulatedHost } from '../../src/sandbox/simulated-host.js';
import { recordNodeTimeline } from './node-timeline.js';
import {
  createSkyhook,
  DEMO_LABEL,
  demoNodes,
  startSkyhookHarness,
  waitForSkyhook,
  waitForSkyhookGone,
  watchNodesInProgress,
  type SkyhookHarness,
} from './skyhook-harness.js';

const NODES = 10;
let h: SkyhookHarness;
let host: SimulatedHost;

beforeAll(async () => {
  h = await startSkyhookHarness(demoNodes(NODES, 0), { simulatedHost: {} });
  host = h.host!;
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

describe.each([
  { name: 'reboot-count', budget: { count: 3 }, expected: 3 },
  { name: 'reboot-percent', budget: { percent: 20 }, expected: 2 },
])('a reboot package on 10 nodes with interruptionBudget $budget', ({ name, budget, expected }) => {
  it(`never has more than ${expected} nodes cordoned or in progress at once, and reboots each node once`, async () => {
    const nodes = demoNodes(NODES, 0).map((node) => node.name);
    const timeline = await recordNodeTimeline(h, nodes);
    const inProgress = await watchNodesInProgress(h, name);
    const before = host.interrupts.length;
    await createSkyhook(h, {
      metadata: { name },
      spec: {
        nodeSelectors: { matchLabels: DEMO_LABEL },
        interruptionBudget: budget,
        packages: {
          kernel: {
            version: '1.0.0',
            image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
            interrupt: { type: 'reboot' },
          },
        },
      },
    });
    const done = await waitForSkyhook(h, name, (scr) => scr.status?.status === 'complete', 240_000);
    await timeline.uncordoned();
    await Promise.all([timeline.stop(), inProgress.stop()]);

    expect(done.status?.completeNodes).toBe(`${NODES}/${NODES}`);
    expect(timeline.maxCordoned()).toBe(expected);
    expect(inProgress.max()).toBe(expected);
    const reboots = host.interrupts.slice(before);
    expect(reboots.map((r) => r.node).sort()).toEqual([...nodes].sort());
    expect(reboots.every((r) => r.rebootsNode && !r.failed)).toBe(true);
    // Every node was cordoned exactly once and is uncordoned at the end.
    expect(nodes.map((node) => timeline.spansOf(node).length)).toEqual(nodes.map(() => 1));
    expect(timeline.spans.every((span) => span.to !== undefined)).toBe(true);

    await h.custom.deleteClusterCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: KINDS.skyhook.plural,
      name,
    });
    await waitForSkyhookGone(h, name);
  }, 300_000);
});
