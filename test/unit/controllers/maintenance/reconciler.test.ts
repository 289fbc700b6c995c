/**
 * The maintenance reconciler against an in-memory cluster (nodes, pods, Leases, the policy; merge
 * patches applied as the API server would): grants in arrival order up to maxConcurrent through the
 * arbiter, cordon under the policy's claim, drain, the `drained` signal, release on done, a refusal
 * of the arbiter, a lockTTL expiry and a failed drain, each visible in the status.
 */
import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject, V1Lease, V1Node, V1Pod } from '@kubernetes/client-node';
import type { MaintenancePolicy, MaintenancePolicySpec } from '../../../../src/api/maintenance-policy.js';
import { leaseStateOf, MAINTENANCE_LEASE, maintenanceLeaseName } from '../../../../src/api/maintenance-protocol.js';
import type { DisruptionArbiter } from '../../../../src/controllers/disruption/arbiter.js';
import { checkRebootBlockers } from '../../../../src/controllers/maintenance/blockers.js';
import {
  DEFAULT_MAINTENANCE_SETTINGS,
  type MaintenanceContext,
} from '../../../../src/controllers/maintenance/context.js';
import { LeaseWrites } from '../../../../src/controllers/maintenance/lease-writes.js';
import { MaintenanceMetrics } from '../../../../src/controllers/maintenance/maintenance-metrics.js';
import { MaintenanceReconciler } from '../../../../src/controllers/maintenance/reconciler.js';
import { DrainTasks } from '../../../../src/controllers/nodeop/drain-tasks.js';
import type { KubeClients } from '../../../../src/kube/client.js';
import { EventRecorder } from '../../../../src/kube/events.js';
import type { Informer } from '../../../../src/kube/informer.js';
import { silentLogger } from '../../../../src/kube/logger.js';
import { RuntimeMetrics } from '../../../../src/kube/metrics.js';

const CLAIM = 'skyhook.nvidia.com/maintenance_p';
type Json = Record<string, unknown>;

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Json =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [key, value] of Object.entries(patch as Json)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

const notFound = (): Error => Object.assign(new Error('not found'), { code: 404 });

class World {
  rv = 1;
  now = Date.parse('2026-01-01T00:00:00Z');
  nodes = new Map<string, V1Node>();
  leases = new Map<string, V1Lease>();
  pods: V1Pod[] = [];
  policy: MaintenancePolicy;
  events: string[] = [];
  arbiterCalls: string[] = [];
  refuse = new Set<string>();

  constructor(spec: MaintenancePolicySpec, nodes: number) {
    this.policy = {
      apiVersion: 'skyhook.nvidia.com/v1alpha1',
      kind: 'MaintenancePolicy',
      metadata: { name: 'p', uid: 'u', resourceVersion: String(this.rv++) },
      spec,
    };
    for (let i = 0; i < nodes; i++) {
      const name = `n${i}`;
      this.nodes.set(name, {
        metadata: { name, labels: {}, annotations: {}, resourceVersion: String(this.rv++) },
        spec: {},
      });
      this.leases.set(maintenanceLeaseName(name), {
        metadata: {
          name: maintenanceLeaseName(name),
          namespace: 'skyhook',
          labels: { [MAINTENANCE_LEASE.nodeLabel]: name },
          annotations: {},
          resourceVersion: String(this.rv++),
        },
        spec: { renewTime: new Date(this.now) },
      });
    }
  }

  request(node: string, secondsAgo: number): void {
    const request = { protocol: 'maintenance', requestedAt: new Date(this.now - secondsAgo * 1000).toISOString() };
    this.annotateLease(node, { [MAINTENANCE_LEASE.request]: JSON.stringify(request) });
  }

  done(node: string): void {
    const state = this.state(node);
    const done = { requestedAt: state.request!.requestedAt, completedAt: new Date(this.now).toISOString() };
    this.annotateLease(node, { [MAINTENANCE_LEASE.done]: JSON.stringify(done) });
  }

  annotateLease(node: string, annotations: Record<string, string | null>): V1Lease {
    const name = maintenanceLeaseName(node);
    const lease = this.leases.get(name);
    if (!lease) throw notFound();
    const next = mergePatch(lease, { metadata: { annotations, resourceVersion: String(this.rv++) } }) as V1Lease;
    this.leases.set(name, next);
    return next;
  }

  state(node: string) {
    return leaseStateOf(this.leases.get(maintenanceLeaseName(node))!)!;
  }

  cordoned(): string[] {
    return [...this.nodes.values()]
      .filter((n) => n.spec?.unschedulable && n.metadata?.annotations?.[CLAIM] === 'true')
      .map((n) => n.metadata!.name!);
  }

  context(): MaintenanceContext {
    const informer = <T extends KubernetesObject>(store: () => T[], get: (name: string) => T | undefined) =>
      ({ list: store, get }) as unknown as Informer<T>;
    const core = {
      readNode: async ({ name }: { name: string }) =>
        structuredClone(this.nodes.get(name) ?? Promise.reject(notFound())),
      patchNode: async ({ name, body }: { name: string; body: Json }) => {
        const node = this.nodes.get(name);
        if (!node) throw notFound();
        const { metadata, ...rest } = body as { metadata: Json };
        const { resourceVersion: _rv, ...meta } = metadata;
        const next = mergePatch(node, { ...rest, metadata: { ...meta, resourceVersion: String(this.rv++) } }) as V1Node;
        this.nodes.set(name, next);
        return next;
      },
      listPodForAllNamespaces: async ({ fieldSelector }: { fieldSelector: string }) => ({
        items: this.pods.filter((p) => `spec.nodeName=${p.spec?.nodeName}` === fieldSelector),
      }),
    };
    const coordination = {
      patchNamespacedLease: async ({ name, body }: { name: string; body: { metadata: { annotations: Json } } }) =>
        this.annotateLease(
          this.leases.get(name)?.metadata?.labels?.[MAINTENANCE_LEASE.nodeLabel] ?? name,
          body.metadata.annotations as Record<string, string | null>,
        ),
      deleteNamespacedLease: async ({ name }: { name: string }) => this.leases.delete(name),
    };
    const custom = {
      patchClusterCustomObjectStatus: async ({ body }: { body: { status: Json } }) => {
        this.policy = {
          ...this.policy,
          metadata: { ...this.policy.metadata, resourceVersion: String(this.rv++) },
          status: body.status,
        };
        return this.policy;
      },
    };
    const arbiter: DisruptionArbiter = {
      tryAcquire: (node, holder) => {
        this.arbiterCalls.push(`${holder}:${node}`);
        return this.refuse.has(node) ? { granted: false, budget: 'b', reason: 'full' } : { granted: true };
      },
    };
    const leases = informer(
      () => [...this.leases.values()],
      (name) => this.leases.get(name),
    );
    const clock = { now: () => this.now, setTimeout: () => 0, clearTimeout: () => undefined };
    const events = new EventRecorder(
      {
        create: async (_ns, e) => this.events.push(`${e.involvedObject.kind}/${e.involvedObject.name} ${e.reason}`),
        patch: async () => undefined,
      },
      { component: 'test', logger: silentLogger(), clock, windowMs: 0 },
    );
    return {
      clients: { core, coordination, custom } as unknown as KubeClients,
      caches: {
        policies: informer(
          () => [this.policy],
          (name) => (name === 'p' ? this.policy : undefined),
        ),
        nodes: informer(
          () => [...this.nodes.values()],
          (name) => this.nodes.get(name),
        ),
        leases,
      },
      leases: new LeaseWrites(coordination as never, 'skyhook', leases),
      events,
      logger: silentLogger(),
      clock,
      arbiter,
      rebootBlockers: checkRebootBlockers,
      drains: new DrainTasks(),
      metrics: new MaintenanceMetrics(new RuntimeMetrics().registry),
      settings: DEFAULT_MAINTENANCE_SETTINGS,
      enqueue: () => undefined,
      signal: new AbortController().signal,
    };
  }
}

/**
 * Reconciles until nothing changes (background drains settle in between); fails rather than handing
 * the test a half-settled world when it never settles.
 */
async function settle(reconciler: MaintenanceReconciler, world: World): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const before = world.rv;
    await reconciler.reconcile('p');
    await new Promise((r) => setTimeout(r, 5));
    if (world.rv === before) return;
  }
  throw new Error('the maintenance world did not settle in 400 reconciles');
}

describe('MaintenanceReconciler', () => {
  it('grants in arrival order up to maxConcurrent, cordons, drains, signals, and releases on done', async () => {
    const world = new World({ maxConcurrent: 2 }, 5);
    const reconciler = new MaintenanceReconciler(world.context());
    world.request('n3', 50);
    world.request('n1', 40);
    world.request('n4', 30);
    world.request('n0', 20);
    await settle(reconciler, world);
    expect(world.cordoned().sort()).toEqual(['n1', 'n3']);
    expect(world.state('n3').grant?.phase).toBe('drained');
    expect(world.arbiterCalls).toEqual(['maintenance/p:n3', 'maintenance/p:n1']);
    expect(world.policy.status?.holders?.map((h) => [h.node, h.phase])).toEqual([
      ['n3', 'InProgress'],
      ['n1', 'InProgress'],
    ]);
    expect(world.policy.status?.queue?.map((q) => [q.node, q.reason])).toEqual([
      ['n4', 'MaxConcurrent'],
      ['n0', 'MaxConcurrent'],
    ]);

    world.done('n3');
    await settle(reconciler, world);
    expect(world.state('n3').grant).toBeUndefined();
    expect(world.nodes.get('n3')?.spec?.unschedulable).toBe(false);
    expect(world.cordoned().sort()).toEqual(['n1', 'n4']);
    expect(world.policy.status?.recentCompletions?.map((c) => c.node)).toEqual(['n3']);
    expect(world.events).toContain('Node/n3 MaintenanceCompleted');
  });

  it('leaves a request the arbiter refuses in the queue with its reason and grants the next', async () => {
    const world = new World({ maxConcurrent: 2 }, 3);
    world.refuse.add('n0');
    const reconciler = new MaintenanceReconciler(world.context());
    world.request('n0', 20);
    world.request('n1', 10);
    await settle(reconciler, world);
    expect(world.cordoned()).toEqual(['n1']);
    expect(world.policy.status?.queue).toEqual([
      expect.objectContaining({ node: 'n0', reason: 'ClusterBudget', message: 'b: full' }),
    ]);
  });

  it('releases a holder whose daemon stopped renewing its Lease for lockTTL, lifting its cordon', async () => {
    const world = new World({ maxConcurrent: 1, lockTTL: '1m' }, 2);
    const reconciler = new MaintenanceReconciler(world.context());
    world.request('n0', 5);
    world.request('n1', 1);
    await settle(reconciler, world);
    expect(world.cordoned()).toEqual(['n0']);
    world.now += 61_000; // n0's daemon renews nothing; n1's is in the queue
    const lease = world.leases.get(maintenanceLeaseName('n1'))!;
    world.leases.set(maintenanceLeaseName('n1'), { ...lease, spec: { renewTime: new Date(world.now) } });
    await settle(reconciler, world);
    expect(world.events).toContain('Node/n0 MaintenanceExpired');
    expect(world.state('n0').grant).toBeUndefined();
    expect(world.cordoned()).toEqual(['n1']);
  });

  it('a refused drain releases the slot and holds the request back, visibly', async () => {
    const world = new World({ maxConcurrent: 1, drainOptions: { force: false } }, 2);
    world.pods.push({
      metadata: { name: 'bare', namespace: 'x', uid: 'p1' },
      spec: { nodeName: 'n0', containers: [] },
    });
    const reconciler = new MaintenanceReconciler(world.context());
    world.request('n0', 5);
    await settle(reconciler, world);
    expect(world.events).toContain('Node/n0 DrainFailed');
    expect(world.cordoned()).toEqual([]);
    expect(world.policy.status?.queue).toEqual([expect.objectContaining({ node: 'n0', reason: 'DrainFailed' })]);
  });
});

it('says in a condition which rebootWindow the API server could not refuse but no clock can use', async () => {
  const world = new World({ rebootWindows: [{ start: '22:00', end: '04:00', timeZone: 'Mars/Olympus_Mons' }] }, 1);
  await settle(new MaintenanceReconciler(world.context()), world);
  const invalid = world.policy.status?.conditions?.find((c) => c.type === 'InvalidSpec');
  expect(invalid).toMatchObject({ status: 'True', reason: 'InvalidRebootWindow' });
  expect(invalid?.message).toContain('rebootWindows[0]');
});
