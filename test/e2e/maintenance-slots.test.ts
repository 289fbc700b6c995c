/**
 * Node-initiated maintenance (#15) against the real control plane on 20 simulated nodes, each with
 * its own `skyhook maintenance` process and temp host root: every node asks at once with
 * maxConcurrent 3 and a watcher never sees more than 3 cordoned by maintenance while all complete;
 * daemons killed at random keep that and still finish; a failing script keeps its node cordoned and
 * its slot held, visibly; a node deleted while holding its slot frees it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { MAINTENANCE_LEASE, maintenanceLeaseName } from '../../src/api/maintenance-protocol.js';
import {
  applyPolicy,
  IN_PROGRESS,
  REQUIRED,
  requestMaintenance,
  runScripts,
  startDaemons,
  startMaintenanceHarness,
  waitForPolicy,
  watchMaintenanceCordons,
  type MaintenanceHarness,
} from './maintenance-harness.js';
import { NAMESPACE } from './skyhook-cluster.js';

const NODES = Array.from({ length: 20 }, (_, i) => `maint-${String(i).padStart(2, '0')}`);
const LABELS = { 'maintenance-e2e': 'yes' };
let h: MaintenanceHarness;

beforeAll(async () => {
  h = await startMaintenanceHarness(NODES.map((name) => ({ name, labels: LABELS })));
  await applyPolicy(h, 'fleet', { nodeSelector: { matchLabels: LABELS }, maxConcurrent: 3, lockTTL: '2m' });
  await startDaemons(h, NODES);
}, 180_000);

afterAll(async () => {
  await h?.stop();
}, 60_000);

const completedNodes = (policy: { status?: { recentCompletions?: { node: string }[] } }): Set<string> =>
  new Set((policy.status?.recentCompletions ?? []).map((c) => c.node));

describe('20 nodes asking at once, maxConcurrent 3', () => {
  it('never has more than 3 nodes cordoned by maintenance, and every node completes once', async () => {
    const watcher = await watchMaintenanceCordons(h, 'fleet');
    const scripts = runScripts(h, NODES, { durationMs: 500 });
    for (const node of NODES) requestMaintenance(h, node);
    const done = await waitForPolicy(
      h,
      'fleet',
      (p) => NODES.every((n) => completedNodes(p).has(n)) && (p.status?.holderCount ?? 1) === 0,
      180_000,
    );
    scripts.stop();
    await watcher.uncordoned();
    await watcher.stop();
    expect(watcher.max()).toBeLessThanOrEqual(3);
    expect(watcher.max()).toBe(3);
    expect([...watcher.everCordoned].sort()).toEqual(NODES);
    expect(watcher.cordoned()).toEqual([]);
    expect(NODES.map((n) => scripts.inProgressSeen.get(n))).toEqual(NODES.map(() => 1));
    expect(NODES.filter((n) => existsSync(h.hostPath(n, IN_PROGRESS)) || existsSync(h.hostPath(n, REQUIRED)))).toEqual(
      [],
    );
    expect(done.status?.queueLength).toBe(0);
  }, 240_000);
});

describe('daemons killed at random', () => {
  it('keep at most 3 cordoned and still finish', async () => {
    const nodes = NODES.slice(0, 10);
    const watcher = await watchMaintenanceCordons(h, 'fleet');
    const scripts = runScripts(h, nodes, { durationMs: 1_500 });
    const before = await waitForPolicy(h, 'fleet', () => true);
    const start = Date.parse(new Date().toISOString());
    for (const node of nodes) requestMaintenance(h, node);
    // Five kills at random moments of random daemons, each restarted a moment later.
    for (let kill = 0; kill < 5; kill++) {
      await new Promise((r) => setTimeout(r, 500 + Math.random() * 2_000));
      const node = nodes[Math.floor(Math.random() * nodes.length)]!;
      await h.killDaemon(node);
      await new Promise((r) => setTimeout(r, Math.random() * 1_000));
      h.startDaemon(node);
    }
    const finished = (p: { status?: { recentCompletions?: { node: string; completedAt: string }[] } }) =>
      nodes.every((n) =>
        (p.status?.recentCompletions ?? []).some((c) => c.node === n && Date.parse(c.completedAt) >= start - 1000),
      );
    await waitForPolicy(h, 'fleet', (p) => finished(p) && (p.status?.holderCount ?? 1) === 0, 180_000);
    scripts.stop();
    await watcher.uncordoned();
    await watcher.stop();
    expect(before.status?.holderCount).toBe(0);
    expect(watcher.max()).toBeLessThanOrEqual(3);
    expect(watcher.cordoned()).toEqual([]);
    expect(nodes.filter((n) => existsSync(h.hostPath(n, IN_PROGRESS)) || existsSync(h.hostPath(n, REQUIRED)))).toEqual(
      [],
    );
  }, 240_000);
});

describe('a failing script and a deleted node', () => {
  it('keeps the failing node cordoned with its slot held, visibly, until its node is deleted', async () => {
    await applyPolicy(h, 'fleet', { nodeSelector: { matchLabels: LABELS }, maxConcurrent: 1, lockTTL: '2m' });
    const [failing, next] = [NODES[18]!, NODES[19]!];
    const scripts = runScripts(h, [failing, next], { durationMs: 300, failing: new Set([failing]) });
    requestMaintenance(h, failing);
    await waitForPolicy(
      h,
      'fleet',
      (p) => p.status?.holders?.some((x) => x.node === failing && x.phase === 'InProgress') ?? false,
    );
    requestMaintenance(h, next);
    const stuck = await waitForPolicy(h, 'fleet', (p) => p.status?.queue?.some((q) => q.node === next) ?? false);
    // The failed script left the required file: the node stays cordoned and keeps the one slot, and
    // the status says what its daemon waits for.
    const held = await waitForPolicy(
      h,
      'fleet',
      (p) => p.status?.holders?.[0]?.message?.includes(`waiting for ${REQUIRED} to be removed`) ?? false,
    );
    await new Promise((r) => setTimeout(r, 2_000));
    const node = await h.core.readNode({ name: failing });
    expect(node.spec?.unschedulable).toBe(true);
    expect(existsSync(h.hostPath(failing, IN_PROGRESS))).toBe(true);
    expect(held.status?.holders?.map((x) => [x.node, x.phase])).toEqual([[failing, 'InProgress']]);
    expect(stuck.status?.queue?.find((q) => q.node === next)?.reason).toBe('MaxConcurrent');
    expect(held.status?.conditions?.find((c) => c.type === 'SlotsAvailable')?.status).toBe('False');

    // Deleting the node that holds the slot frees it: the next node gets it and completes.
    await h.killDaemon(failing);
    await h.core.deleteNode({ name: failing });
    await waitForPolicy(
      h,
      'fleet',
      (p) => (p.status?.recentCompletions ?? []).some((c) => c.node === next) && (p.status?.holderCount ?? 1) === 0,
      90_000,
    );
    scripts.stop();
    const leases = await h.coordination.listNamespacedLease({
      namespace: NAMESPACE,
      labelSelector: MAINTENANCE_LEASE.nodeLabel,
    });
    expect(leases.items.map((l) => l.metadata?.name)).not.toContain(maintenanceLeaseName(failing));
  }, 180_000);
});
