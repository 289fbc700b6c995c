/**
 * Kured's protocol through the real control plane on simulated nodes, each with its own daemon
 * process and host root (the simulated reboot: a new boot ID, an emptied /var/run, a line in the
 * reboot log): a node with /var/run/reboot-required is cordoned, drained and rebooted once, the new
 * boot ID confirms it, and it is uncordoned; with maxConcurrent 1 two nodes reboot one after the other.
 * Outside rebootWindows a node waits, visibly (queue reason, Event), and starts once the window is
 * changed to one open now.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { BOOT_ID_PATH } from '../../src/maintenance-daemon/host.js';
import { SIMULATED_REBOOT_LOG } from '../../src/maintenance-daemon/rebooter.js';
import { eventually } from './eventually.js';
import {
  applyPolicy,
  REBOOT_SENTINEL,
  requestMaintenance,
  startDaemons,
  startMaintenanceHarness,
  waitForPolicy,
  watchMaintenanceCordons,
  type MaintenanceHarness,
} from './maintenance-harness.js';

const NODES = ['reboot-0', 'reboot-1', 'reboot-2'];
const LABELS = { 'maintenance-e2e': 'reboot' };
let h: MaintenanceHarness;

beforeAll(async () => {
  h = await startMaintenanceHarness(NODES.map((name) => ({ name, labels: LABELS })));
  await startDaemons(h, NODES);
}, 180_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const reboots = (node: string): string[] => {
  const log = h.hostPath(node, SIMULATED_REBOOT_LOG);
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
};

describe('reboot-required', () => {
  it('reboots each asking node once, one at a time, and the new boot ID ends its slot', async () => {
    await applyPolicy(h, 'reboots', {
      nodeSelector: { matchLabels: LABELS },
      maxConcurrent: 1,
      protocols: { maintenance: { enabled: false }, reboot: { rebootDelay: '200ms' } },
    });
    const asking = NODES.slice(0, 2);
    const bootIds = new Map(asking.map((n) => [n, readFileSync(h.hostPath(n, BOOT_ID_PATH), 'utf8').trim()]));
    const watcher = await watchMaintenanceCordons(h, 'reboots');
    for (const node of asking) requestMaintenance(h, node, REBOOT_SENTINEL);
    const done = await waitForPolicy(
      h,
      'reboots',
      (p) =>
        asking.every((n) => (p.status?.recentCompletions ?? []).some((c) => c.node === n && c.protocol === 'reboot')) &&
        (p.status?.holderCount ?? 1) === 0,
      120_000,
    );
    await watcher.uncordoned();
    await watcher.stop();
    expect(watcher.max()).toBe(1);
    expect([...watcher.everCordoned].sort()).toEqual(asking);
    expect(watcher.cordoned()).toEqual([]);
    for (const node of asking) {
      expect(reboots(node)).toHaveLength(1);
      expect(readFileSync(h.hostPath(node, BOOT_ID_PATH), 'utf8').trim()).not.toBe(bootIds.get(node));
      expect(existsSync(h.hostPath(node, REBOOT_SENTINEL))).toBe(false);
    }
    expect(reboots(NODES[2]!)).toEqual([]);
    expect(done.status?.matchedNodes).toBe(NODES.length);
  }, 180_000);
});

/** `HH:MM:SS` (UTC) of an instant. */
const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);

/** An opening ten hours or more away, whole seconds, whose 30-minute window ends the same day (UTC). */
function farOpening(now: number): number {
  let opening = Math.ceil((now + 10 * 3_600_000) / 1000) * 1000;
  if (new Date(opening).getUTCHours() >= 23) opening += 2 * 3_600_000;
  return opening;
}

describe('rebootWindows', () => {
  // The window is hours away while the held state is checked, then changed to one open now: every
  // check is an order of events, so a slow machine cannot let the window open before the hold is seen.
  it('holds a reboot outside the window, visibly, and starts it when the window opens', async () => {
    const node = NODES[2]!;
    const opening = farOpening(Date.now());
    const spec = {
      nodeSelector: { matchLabels: LABELS },
      maxConcurrent: 1,
      protocols: { maintenance: { enabled: false }, reboot: {} },
    };
    await applyPolicy(h, 'reboots', {
      ...spec,
      rebootWindows: [{ start: clock(opening), end: clock(opening + 30 * 60_000) }],
    });
    const watcher = await watchMaintenanceCordons(h, 'reboots');
    requestMaintenance(h, node, REBOOT_SENTINEL);
    const waiting = await waitForPolicy(h, 'reboots', (p) => p.status?.queue?.some((q) => q.node === node) ?? false);
    const entry = waiting.status?.queue?.find((q) => q.node === node);
    expect(entry?.reason).toBe('OutsideMaintenanceWindow');
    expect(entry?.message).toContain(new Date(opening).toISOString());
    // The Event is recorded fire-and-forget in the pass that queues the node, beside its status write:
    // the status the test waited for may be in the API before the Event.
    const events = await eventually(
      () => h.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${node}` }),
      (list) => list.items.some((e) => e.reason === 'MaintenanceWaiting'),
    );
    expect(events.items.map((e) => e.reason)).toContain('MaintenanceWaiting');
    expect(watcher.everCordoned.has(node)).toBe(false);
    expect(reboots(node)).toEqual([]);
    const opened = Date.now();
    await applyPolicy(h, 'reboots', { ...spec, rebootWindows: [{ start: '00:00:00', end: '23:59:59' }] });
    await waitForPolicy(
      h,
      'reboots',
      (p) => (p.status?.recentCompletions ?? []).some((c) => c.node === node) && (p.status?.holderCount ?? 1) === 0,
      90_000,
    );
    await watcher.uncordoned();
    await watcher.stop();
    const [line] = reboots(node);
    expect(Date.parse(line!.split(' ')[0]!)).toBeGreaterThanOrEqual(opened);
    expect(watcher.cordoned()).toEqual([]);
  }, 150_000);
});
