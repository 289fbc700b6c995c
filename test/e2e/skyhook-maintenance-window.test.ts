/**
 * A DeploymentPolicy maintenance window through the real operator and the simulated host (#16): the
 * window is closed at apply time and opens a little later. Until it opens no node is cordoned and no
 * interrupt runs, while a Skyhook without interrupts under the same policy completes; the held nodes
 * say why and the SCR says when the window opens; at the opening (a timer, no event) the reboot
 * Skyhook proceeds and completes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { nodeAnnotations, SKYHOOK_CONDITIONS } from '../../src/api/names.js';
import type { Skyhook } from '../../src/api/skyhook.js';
import type { SimulatedHost } from '../../src/sandbox/simulated-host.js';
import { recordNodeTimeline } from './node-timeline.js';
import {
  createDeploymentPolicy,
  createGroupSkyhook,
  groupNodes,
  recordStageJobs,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';

const GROUP = 'win';
const NODES = groupNodes(GROUP, 3);
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
/** Time from apply to the opening: enough for the Skyhook without interrupts to complete first. */
const CLOSED_MS = 45_000;

let h: SkyhookHarness;
let host: SimulatedHost;

beforeAll(async () => {
  h = await startSkyhookHarness(NODES, { simulatedHost: {} });
  host = h.host!;
}, 120_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

/** `HH:MM:SS` (UTC) of an instant. */
const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
const condition = (scr: Skyhook, type: string) => scr.status?.conditions?.find((c) => c.type === type);

describe('a maintenance window closed at apply time', () => {
  it('starts no interrupt until it opens, lets work without interrupts complete meanwhile, then completes', async () => {
    const nodes = NODES.map((node) => node.name);
    const timeline = await recordNodeTimeline(h, nodes);
    const jobs = await recordStageJobs(h);
    // Whole seconds: the window's start has second precision.
    const opening = Math.ceil((Date.now() + CLOSED_MS) / 1000) * 1000;
    await createDeploymentPolicy(h, 'lunch', {
      default: { budget: { count: 3 }, strategy: { fixed: { initialBatch: 3 } } },
      maintenanceWindows: [{ start: clock(opening), end: clock(opening + 30 * 60_000), timeZone: 'UTC' }],
    });
    // Earlier priority: the reboot Skyhook waits on each node until this one is complete there.
    await createGroupSkyhook(h, 'calm', GROUP, {
      priority: 1,
      deploymentPolicy: 'lunch',
      packages: { tune: { version: '1.0.0', image: IMAGE } },
    });
    await createGroupSkyhook(h, 'reboot', GROUP, {
      priority: 2,
      deploymentPolicy: 'lunch',
      packages: { kernel: { version: '1.0.0', image: IMAGE, interrupt: { type: 'reboot' } } },
    });

    const calm = await waitForSkyhook(h, 'calm', (s) => s.status?.status === 'complete', CLOSED_MS);
    expect(calm.status?.completeNodes).toBe('3/3');
    const held = await waitForSkyhook(
      h,
      'reboot',
      (s) => condition(s, SKYHOOK_CONDITIONS.maintenanceWindow)?.message?.startsWith('3 node(s) wait') === true,
      CLOSED_MS,
    );
    expect(Date.now()).toBeLessThan(opening);
    const openingText = new Date(opening).toISOString().replace('.000Z', 'Z');
    expect(held.status?.nextMaintenanceWindow).toBe(openingText);
    expect(condition(held, SKYHOOK_CONDITIONS.maintenanceWindow)).toMatchObject({
      status: 'True',
      reason: 'OutsideMaintenanceWindow',
    });
    const node = await h.core.readNode({ name: nodes[0]! });
    expect(node.metadata?.annotations?.[nodeAnnotations.waiting('reboot')]).toBe(
      `OutsideMaintenanceWindow: interrupts wait for a maintenance window (DeploymentPolicy "lunch": ${clock(opening)}-${clock(opening + 30 * 60_000)} UTC); next opens ${openingText}`,
    );

    const done = await waitForSkyhook(h, 'reboot', (s) => s.status?.status === 'complete', CLOSED_MS + 120_000);
    await timeline.uncordoned();
    await Promise.all([timeline.stop(), jobs.stop()]);
    expect(done.status?.nextMaintenanceWindow).toBeUndefined();
    expect(condition(done, SKYHOOK_CONDITIONS.maintenanceWindow)).toBeUndefined();
    // Nothing of the reboot Skyhook ran before the opening: no cordon, no stage Job, no reboot.
    expect(timeline.spans.map((span) => span.node).sort()).toEqual(nodes);
    expect(timeline.spans.every((span) => span.from >= opening && span.to !== undefined)).toBe(true);
    const rebootJobs = [...jobs.jobs.values()].filter((job) => job.skyhook === 'reboot');
    expect(rebootJobs.length).toBeGreaterThan(0);
    expect(rebootJobs.every((job) => job.seenAt >= opening)).toBe(true);
    const reboots = host.interrupts.filter((interrupt) => nodes.includes(interrupt.node));
    expect(reboots.map((r) => r.node).sort()).toEqual(nodes);
    expect(reboots.every((r) => r.at >= opening && r.rebootsNode && !r.failed)).toBe(true);
    // The Skyhook without interrupts ran entirely while the window was closed.
    const calmJobs = [...jobs.jobs.values()].filter((job) => job.skyhook === 'calm');
    expect(calmJobs.length).toBeGreaterThanOrEqual(6);
    expect(calmJobs.every((job) => job.seenAt < opening)).toBe(true);
  }, 300_000);
});
