/**
 * A DeploymentPolicy maintenance window through the real operator and the simulated host: the
 * window is closed at apply time (its next opening hours away). While it is closed no node is
 * cordoned and no interrupt runs, while a Skyhook without interrupts under the same policy completes;
 * the held nodes say why and the SCR says when the window opens. Once that held state has been seen,
 * the test changes the policy's window to one open now, and the reboot Skyhook proceeds and
 * completes. Every check is an order of events (before or after the window changed), so a slow
 * machine cannot make the window open before the test has seen the held state.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { nodeAnnotations, SKYHOOK_CONDITIONS } from '../../src/api/names.js';
import type { Skyhook } from '../../src/api/skyhook.js';
import type { SimulatedHost } from '../../src/sandbox/simulated-host.js';
import { recordNodeTimeline } from './node-timeline.js';
import { API_GROUP, API_VERSION, KINDS } from '../../src/api/names.js';
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
/** Hours from apply to the closed window's opening: never reached while the test runs. */
const CLOSED_HOURS = 10;

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

/** An opening CLOSED_HOURS or more away, whole seconds, whose 30-minute window ends the same day (UTC). */
function farOpening(now: number): number {
  let opening = Math.ceil((now + CLOSED_HOURS * 3_600_000) / 1000) * 1000;
  if (new Date(opening).getUTCHours() >= 23) opening += 2 * 3_600_000;
  return opening;
}

/** Changes the policy's only window to the whole day, open now; returns the instant just before the change. */
async function openWindowNow(name: string): Promise<number> {
  const key = { group: API_GROUP, version: API_VERSION, plural: KINDS.deploymentPolicy.plural, name };
  const policy = (await h.custom.getClusterCustomObject(key)) as { spec: { maintenanceWindows?: unknown[] } };
  policy.spec.maintenanceWindows = [{ start: '00:00:00', end: '23:59:59', timeZone: 'UTC' }];
  const changedAt = Date.now();
  await h.custom.replaceClusterCustomObject({ ...key, body: policy });
  return changedAt;
}

describe('a maintenance window closed at apply time', () => {
  it('starts no interrupt until it opens, lets work without interrupts complete meanwhile, then completes', async () => {
    const nodes = NODES.map((node) => node.name);
    const timeline = await recordNodeTimeline(h, nodes);
    const jobs = await recordStageJobs(h);
    const opening = farOpening(Date.now());
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

    const calm = await waitForSkyhook(h, 'calm', (s) => s.status?.status === 'complete', 120_000);
    expect(calm.status?.completeNodes).toBe('3/3');
    const held = await waitForSkyhook(
      h,
      'reboot',
      (s) => condition(s, SKYHOOK_CONDITIONS.maintenanceWindow)?.message?.startsWith('3 node(s) wait') === true,
      120_000,
    );
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

    // Nothing of the reboot Skyhook has happened while it was held.
    expect(timeline.spans).toEqual([]);
    expect([...jobs.jobs.values()].filter((job) => job.skyhook === 'reboot')).toEqual([]);
    expect(host.interrupts.filter((interrupt) => nodes.includes(interrupt.node))).toEqual([]);

    const opened = await openWindowNow('lunch');
    const done = await waitForSkyhook(h, 'reboot', (s) => s.status?.status === 'complete', 180_000);
    await timeline.uncordoned();
    await Promise.all([timeline.stop(), jobs.stop()]);
    expect(done.status?.nextMaintenanceWindow).toBeUndefined();
    expect(condition(done, SKYHOOK_CONDITIONS.maintenanceWindow)).toBeUndefined();
    // Nothing of the reboot Skyhook ran before the window opened: no cordon, no stage Job, no reboot.
    expect(timeline.spans.map((span) => span.node).sort()).toEqual(nodes);
    expect(timeline.spans.filter((span) => span.from < opened || span.to === undefined)).toEqual([]);
    const rebootJobs = [...jobs.jobs.values()].filter((job) => job.skyhook === 'reboot');
    expect(rebootJobs.length).toBeGreaterThan(0);
    expect(rebootJobs.filter((job) => job.seenAt < opened)).toEqual([]);
    const reboots = host.interrupts.filter((interrupt) => nodes.includes(interrupt.node));
    expect(reboots.map((r) => r.node).sort()).toEqual(nodes);
    expect(reboots.filter((r) => r.at < opened || !r.rebootsNode || r.failed)).toEqual([]);
    // The Skyhook without interrupts ran entirely while the window was closed.
    const calmJobs = [...jobs.jobs.values()].filter((job) => job.skyhook === 'calm');
    expect(calmJobs.length).toBeGreaterThanOrEqual(6);
    expect(calmJobs.filter((job) => job.seenAt >= opened)).toEqual([]);
  }, 300_000);
});
