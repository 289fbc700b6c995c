/**
 * applyActions against a fake cluster whose writes take a while: the writes of one bucket of
 * action-order.ts overlap, never more than the bound, and never a write of a later bucket before
 * every write of the earlier one is done; the first failure is thrown only once the writes in
 * flight have settled, no later write starts, and every write that succeeded is noted in the
 * write expectations (so the next reconcile waits for the caches to show it).
 */
import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Skyhook } from '../../../../../src/api/skyhook.js';
import type { SkyhookIo } from '../../../../../src/controllers/skyhook/context.js';
import { orderSteps } from '../../../../../src/controllers/skyhook/plan/action-order.js';
import type { PlannerAction } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { applyActions } from '../../../../../src/controllers/skyhook/write/apply-actions.js';
import { writeLimit } from '../../../../../src/controllers/skyhook/write/bounded-writes.js';
import { WriteExpectations } from '../../../../../src/controllers/skyhook/write/write-expectations.js';
import { silentLogger } from '../../../../../src/kube/logger.js';
import { emptyBuckets, nodeStatus } from './action-fixtures.js';

const skyhook: Skyhook = {
  apiVersion: 'skyhook.nvidia.com/v1alpha1',
  kind: 'Skyhook',
  metadata: { name: 's', uid: 'u-1', resourceVersion: '1' },
  spec: { packages: {} },
};

const empty = emptyBuckets;

const status = nodeStatus;

/** One write as the fake API server saw it: what, and when it started and ended (a shared tick). */
interface Call {
  what: string;
  start: number;
  end?: number;
  failed?: boolean;
}

/** A cluster whose every write takes `delayMs` (varied per call so they finish out of order). */
class FakeCluster {
  readonly calls: Call[] = [];
  private tick = 0;
  private inFlight = 0;
  maxInFlight = 0;
  private rv = 100;
  /** Writes that fail (by `what`), after their delay. */
  readonly failing = new Set<string>();
  private readonly delayMs: (what: string) => number;

  constructor(delayMs: (what: string) => number = (what) => 2 + (what.length % 5) * 3) {
    this.delayMs = delayMs;
  }

  async write<T extends KubernetesObject>(what: string, object: T): Promise<T> {
    const call: Call = { what, start: this.tick++ };
    this.calls.push(call);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise((resolve) => setTimeout(resolve, this.delayMs(what)));
    this.inFlight--;
    call.end = this.tick++;
    if (this.failing.has(what)) {
      call.failed = true;
      throw Object.assign(new Error(`${what} failed`), { code: 500 });
    }
    return { ...object, metadata: { ...object.metadata, resourceVersion: String(this.rv++) } };
  }

  io(settings: { writeConcurrency?: number }, expectations = new WriteExpectations()): SkyhookIo {
    const core = {
      patchNodeStatus: ({ name }: { name: string }) => this.write(`node ${name}`, { metadata: { name } }),
      createNamespacedConfigMap: ({ body }: { body: KubernetesObject }) =>
        this.write(`configmap ${body.metadata?.name}`, body),
    };
    const custom = {
      deleteNamespacedCustomObject: ({ name }: { name: string }) =>
        this.write(`delete ${name}`, { metadata: { name } }),
      replaceClusterCustomObjectStatus: ({ name, body }: { name: string; body: KubernetesObject }) =>
        this.write(`status ${name}`, body),
    };
    const events: string[] = [];
    return {
      clients: { core, custom },
      caches: { nodes: { get: () => undefined }, skyhooks: { get: () => skyhook } },
      settings: { namespace: 'skyhook', ...settings },
      events: { record: (_o: unknown, _t: string, reason: string) => events.push(reason) },
      expectations,
      arbiter: { tryAcquire: () => ({ granted: true }) },
      logger: silentLogger(),
      now: () => 0,
    } as unknown as SkyhookIo;
  }

  /** The calls whose `what` starts with `prefix`. */
  of(prefix: string): Call[] {
    return this.calls.filter((call) => call.what.startsWith(prefix));
  }
}

const nodes = (prefix: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);

/** Every call of `earlier` ended before any call of `later` started. */
function strictlyBefore(earlier: Call[], later: Call[]): boolean {
  const lastEnd = Math.max(...earlier.map((call) => call.end ?? Infinity));
  const firstStart = Math.min(...later.map((call) => call.start));
  return lastEnd < firstStart;
}

function rollout(): PlannerAction[][] {
  return orderSteps({
    ...empty(),
    configMaps: [1, 2, 3].map((i) => ({
      kind: 'upsertPackageConfigMap' as const,
      skyhook: 's',
      package: `p${i}`,
      version: '1.0.0',
      data: { a: 'b' },
    })),
    nodeWrites: nodes('done', 12).map((node) => status(node, 'complete')),
    slotTakers: nodes('next', 12).map((node) => status(node, 'in_progress')),
    deletes: nodes('op', 6).map((name) => ({ kind: 'deleteStageOp' as const, name, reason: 'recorded' })),
    status: { kind: 'setSkyhookStatus', skyhook: 's', status: { status: 'in_progress' } },
    events: [{ kind: 'event', involved: { kind: 'Skyhook', name: 's' }, type: 'Normal', reason: 'R', message: 'm' }],
  });
}

describe('applyActions, concurrently within a bucket', () => {
  it('overlaps the writes of a bucket up to the bound, and keeps the buckets strictly in order', async () => {
    const cluster = new FakeCluster();
    const expectations = new WriteExpectations();
    await applyActions(cluster.io({ writeConcurrency: 4 }, expectations), skyhook, rollout());
    expect(cluster.calls).toHaveLength(3 + 12 + 12 + 6 + 1);
    expect(cluster.maxInFlight).toBe(4);
    const buckets = [cluster.of('configmap'), cluster.of('node done'), cluster.of('node next'), cluster.of('delete')];
    for (let i = 0; i + 1 < buckets.length; i++) expect(strictlyBefore(buckets[i]!, buckets[i + 1]!)).toBe(true);
    expect(strictlyBefore(cluster.of('delete'), cluster.of('status'))).toBe(true);
    for (const node of [...nodes('done', 12), ...nodes('next', 12)])
      expect(expectations.awaits('Node', node)).toBe(true);
    for (const op of nodes('op', 6)) expect(expectations.awaits('NodeOp', op)).toBe(true);
    expect(expectations.awaits('Skyhook', 's')).toBe(true);
  });

  it('applies one write at a time with a bound of 1 (the sequential loop it replaces)', async () => {
    const cluster = new FakeCluster();
    await applyActions(cluster.io({ writeConcurrency: 1 }), skyhook, rollout());
    expect(cluster.maxInFlight).toBe(1);
    expect(cluster.calls.map((call) => call.what)).toEqual([
      'configmap s-p1-1.0.0',
      'configmap s-p2-1.0.0',
      'configmap s-p3-1.0.0',
      ...nodes('done', 12).map((node) => `node ${node}`),
      ...nodes('next', 12).map((node) => `node ${node}`),
      ...nodes('op', 6).map((name) => `delete ${name}`),
      'status s',
    ]);
  });

  it('bounds the writes of every reconcile sharing the controller limiter', async () => {
    const cluster = new FakeCluster();
    const io = { ...cluster.io({ writeConcurrency: 3 }), writeLimit: writeLimit(3) };
    await Promise.all([applyActions(io, skyhook, rollout()), applyActions(io, skyhook, rollout())]);
    expect(cluster.maxInFlight).toBe(3);
  });

  it('throws the first failure once the writes in flight settled, starts nothing after it, and notes every write that succeeded', async () => {
    // Slow successes around a fast failure: they are in flight when it fails.
    const cluster = new FakeCluster((what) => (what === 'node done-02' ? 1 : 15));
    cluster.failing.add('node done-02');
    const expectations = new WriteExpectations();
    const applied = applyActions(cluster.io({ writeConcurrency: 3 }, expectations), skyhook, rollout());
    await expect(applied).rejects.toThrow('node done-02 failed');
    const failure = cluster.calls.find((call) => call.failed)!;
    // Started before the failure: done-00, done-01 (in flight) and done-02; nothing after it.
    expect(cluster.of('node done').map((call) => call.what)).toEqual(['node done-00', 'node done-01', 'node done-02']);
    expect(cluster.calls.every((call) => call.end !== undefined)).toBe(true);
    expect(cluster.calls.filter((call) => call.start > failure.end!)).toEqual([]);
    expect(cluster.of('node next')).toEqual([]);
    expect(cluster.of('delete')).toEqual([]);
    expect(expectations.awaits('Node', 'done-00')).toBe(true);
    expect(expectations.awaits('Node', 'done-01')).toBe(true);
    expect(expectations.awaits('Node', 'done-02')).toBe(false);
    for (const cm of ['s-p1-1.0.0', 's-p2-1.0.0', 's-p3-1.0.0'])
      expect(expectations.awaits('ConfigMap', cm)).toBe(true);
  });

  // The 5000-node overshoot: the caches ran over 30 s behind the writes, a 30 s limit let the next
  // pass plan without the nodes this one had admitted, and it admitted more past the budget.
  it('holds the next reconcile back while the caches lag behind the admissions, however long they lag', async () => {
    const cluster = new FakeCluster();
    let now = 0;
    const expectations = new WriteExpectations(() => now).scoped('s');
    await applyActions(cluster.io({ writeConcurrency: 8 }, expectations), skyhook, rollout());
    const admitted = nodes('next', 12).map((node) => `Node/${node}`);
    // A cache that shows every node as it was before (resourceVersion 1, its informer at 99).
    const stale = (kind: string, name: string): KubernetesObject | undefined =>
      kind === 'Node' ? { metadata: { name, resourceVersion: '1' } } : undefined;
    for (now of [0, 30_001, 4 * 60_000]) {
      const behind = expectations.unmet(stale, () => '99');
      expect(behind).toEqual(expect.arrayContaining(admitted));
    }
    // Caught up: every write shown (or, for the deleted ops, gone), nothing holds the reconcile back.
    expect(
      expectations.unmet((kind, name) =>
        kind === 'NodeOp' ? undefined : { metadata: { name, resourceVersion: '1000' } },
      ),
    ).toEqual([]);
  });

  it('still asks the cluster budgets for each interrupt cordon in the planner order before the step starts', async () => {
    const cluster = new FakeCluster();
    const asked: string[] = [];
    const io = cluster.io({ writeConcurrency: 8 });
    const refusing = {
      ...io,
      arbiter: {
        tryAcquire: (node: string) => {
          asked.push(node);
          return { granted: false, budget: 'b', reason: 'full' };
        },
      },
    } as SkyhookIo;
    const steps = orderSteps({
      ...empty(),
      nodeMetadata: ['n3', 'n1', 'n2'].map((node) => ({
        kind: 'cordonNode' as const,
        node,
        claim: 'skyhook.nvidia.com/cordon_s',
        reason: 'interrupt',
      })),
    });
    await applyActions(refusing, skyhook, steps);
    expect(asked).toEqual(['n3', 'n1', 'n2']);
    expect(cluster.calls).toEqual([]);
  });
});
