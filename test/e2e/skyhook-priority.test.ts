/**
 * Priority, pause and disable across SCRs, after upstream's strict-order scenario, on 2 nodes through
 * the real operator. Layout: `zzz` (priority 1), `a` (2), `b` (3, paused), `c` (3), `d` (3, disabled),
 * `e` (4); demo-1 starts tainted, so nothing may run there.
 *
 *   1. demo-0 finishes priority 1 and moves on to priority 2 while demo-1 is blocked at priority 1
 *      (ordering is per node, not global).
 *   2. demo-1 untainted while demo-0 still runs `a`: the nodes run different priorities at once.
 *   3. Both nodes past priority 2: the paused `b` holds `c` and `e` (waiting) for as long as demo-1
 *      needs to catch up; the disabled `d` shows `disabled`.
 *   4. `b` resumed: on each node b, c, e run in that order, one SCR at a time (priority, then name);
 *      `e` completes although the disabled `d` before it never runs, which holds nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, nodeAnnotations, SKYHOOK_ANNOTATIONS } from '../../src/api/names.js';
import type { Package, Skyhook } from '../../src/api/skyhook.js';
import { mergePatchCustomObject } from '../../src/kube/client.js';
import { waitForList } from '../../src/kube/wait.js';
import { SIM_ENV } from '../../src/sandbox/kwok-stages.js';
import { eventually } from './eventually.js';
import {
  createSkyhook,
  DEMO_LABEL,
  demoNodes,
  kubectlOk,
  recordStageJobs,
  startSkyhookHarness,
  waitForSkyhook,
  type JobRecorder,
  type SkyhookHarness,
  type StageJob,
} from './skyhook-harness.js';

let h: SkyhookHarness;
let jobs: JobRecorder;
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
const BLOCK_TAINT = 'test-block=true:NoSchedule';
/** Priority 1 and 2 run slowly (about 2 s per stage Job), so the windows the test relies on are seconds long. */
const slow: Package = { version: '1.2.0', image: IMAGE, env: [{ name: SIM_ENV.duration, value: '1s' }] };
const fast: Package = { version: '1.2.0', image: IMAGE };
const SCRS: { name: string; priority: number; pkg: Package; annotation?: string }[] = [
  { name: 'zzz', priority: 1, pkg: slow },
  { name: 'a', priority: 2, pkg: slow },
  { name: 'b', priority: 3, pkg: fast, annotation: SKYHOOK_ANNOTATIONS.pause },
  { name: 'c', priority: 3, pkg: fast },
  { name: 'd', priority: 3, pkg: fast, annotation: SKYHOOK_ANNOTATIONS.disable },
  { name: 'e', priority: 4, pkg: fast },
];

beforeAll(async () => {
  h = await startSkyhookHarness(demoNodes(2, 0));
}, 120_000);

afterAll(async () => {
  await jobs?.stop();
  await h?.stop();
}, 60_000);

const statusesOn = (node: V1Node): Record<string, string | undefined> =>
  Object.fromEntries(SCRS.map(({ name }) => [name, node.metadata?.annotations?.[nodeAnnotations.status(name)]]));

/** Resolves with both nodes once `done` holds for their per-SCR statuses. */
async function waitForStatuses(
  what: string,
  done: (byNode: Record<string, Record<string, string | undefined>>) => boolean,
): Promise<Record<string, Record<string, string | undefined>>> {
  const byNodeOf = (nodes: V1Node[]) =>
    Object.fromEntries(nodes.map((node) => [node.metadata?.name ?? '', statusesOn(node)]));
  const nodes = await waitForList<V1Node>(h.cp.kubeConfig, '/api/v1/nodes', (all) => done(byNodeOf(all)), 90_000, what);
  return byNodeOf(nodes);
}

async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const gauge = h.manager()?.runtime.metrics.registry.getSingleMetric(name);
  const values = (await gauge?.get())?.values ?? [];
  return values.find((v) => Object.entries(labels).every(([key, value]) => v.labels[key] === value))?.value;
}

/**
 * Polls `metric` until `accept` holds, returning the last value either way. A reconcile sets its
 * gauges only after its status write and its cleanup, so a test whose watch has seen the write may
 * read them first (and a wait is reported by the reconcile after the one that wrote it onto the node).
 */
function metricEventually(
  name: string,
  labels: Record<string, string>,
  accept: (value: number | undefined) => boolean,
): Promise<number | undefined> {
  return eventually(() => metric(name, labels), accept, { timeoutMs: 15_000, intervalMs: 100 });
}

const jobsOf = (filter: (job: StageJob) => boolean): StageJob[] => [...jobs.jobs.values()].filter(filter);

/**
 * The SCRs in the order the node's Events say they completed there: the `State` Event a node's last
 * stage of an SCR records ("Package [p:v] state complete on [skyhook:<scr>] stage [config]"), in
 * etcd's order (resourceVersion).
 */
async function completionOrderFromEvents(node: string): Promise<string[]> {
  const { items } = await h.core.listEventForAllNamespaces({
    fieldSelector: `involvedObject.kind=Node,involvedObject.name=${node},reason=State`,
  });
  return items
    .map((event) => ({
      rv: Number(event.metadata?.resourceVersion),
      match: /state complete on \[skyhook:([^\]]+)\]/.exec(event.message ?? ''),
    }))
    .filter((e) => e.match !== null)
    .sort((a, b) => a.rv - b.rv)
    .map((e) => e.match![1]!);
}

describe('priority, pause and disable across SCRs (upstream strict-order)', () => {
  it('orders SCRs per node by priority then name, lets a pause hold later SCRs and a disable hold none', async () => {
    // Whole seconds, as the gauge has them: the wait it reports began after this.
    const beforeSkyhooks = Math.floor(Date.now() / 1000);
    await kubectlOk(h, ['taint', 'node', 'demo-1', BLOCK_TAINT]);
    jobs = await recordStageJobs(h);
    for (const { name, priority, pkg, annotation } of SCRS) {
      await createSkyhook(h, {
        metadata: { name, ...(annotation ? { annotations: { [annotation]: 'true' } } : {}) },
        spec: { nodeSelectors: { matchLabels: DEMO_LABEL }, priority, packages: { foobar: pkg } },
      });
    }

    // 1. demo-0 is at priority 2 while demo-1 is still blocked at priority 1.
    const phase1 = await waitForStatuses(
      'demo-0 past priority 1',
      (s) => s['demo-0']?.['zzz'] === 'complete' && s['demo-0']?.['a'] === 'in_progress',
    );
    expect(phase1['demo-1']).toMatchObject({ zzz: 'blocked', a: 'blocked', b: 'paused', d: 'disabled' });
    expect(jobsOf((job) => job.node === 'demo-1')).toEqual([]);
    // b's and d's statuses (and gauges) were set by passes long finished; zzz's node counts change with the
    // status write waited for here, and its reconcile sets them only after that write and its cleanup.
    await waitForSkyhook(
      h,
      'zzz',
      (scr) => scr.status?.nodeStatus?.['demo-0'] === 'complete' && scr.status.nodeStatus['demo-1'] === 'blocked',
    );
    await waitForSkyhook(h, 'b', (scr) => scr.status?.status === 'paused');
    await waitForSkyhook(h, 'd', (scr) => scr.status?.status === 'disabled');
    expect(await metric('skyhook_status', { skyhook_name: 'b', status: 'paused' })).toBe(1);
    expect(await metric('skyhook_status', { skyhook_name: 'd', status: 'disabled' })).toBe(1);
    const zzzNodes = (status: string) =>
      metricEventually('skyhook_node_status_count', { skyhook_name: 'zzz', status }, (v) => v === 1);
    expect(await zzzNodes('complete')).toBe(1);
    expect(await zzzNodes('blocked')).toBe(1);
    const tainted = { skyhook_name: 'zzz', reason: 'TaintNotTolerable' };
    expect(await metricEventually('skyhook_node_waiting_count', tainted, (v) => v === 1)).toBe(1);
    // The wait began once the Skyhooks existed (not at 0, not in the future).
    const waitingSince = await metric('skyhook_node_waiting_since_timestamp_seconds', tainted);
    expect(waitingSince).toBeGreaterThanOrEqual(beforeSkyhooks);
    expect(waitingSince).toBeLessThanOrEqual(Date.now() / 1000);

    // 2. Unblocked: demo-1 starts priority 1 while demo-0 still runs priority 2.
    await kubectlOk(h, ['taint', 'node', 'demo-1', 'test-block-']);

    // 3. Both past priority 2; the paused b holds c and e, the whole time demo-1 was catching up.
    const phase3 = await waitForStatuses('both nodes past priority 2', (s) =>
      ['demo-0', 'demo-1'].every((node) => s[node]?.['a'] === 'complete'),
    );
    for (const node of ['demo-0', 'demo-1'])
      expect(phase3[node]).toEqual({
        zzz: 'complete',
        a: 'complete',
        b: 'paused',
        c: 'waiting',
        d: 'disabled',
        e: 'waiting',
      });
    const aOnDemo0 = jobsOf((job) => job.skyhook === 'a' && job.node === 'demo-0');
    const firstZzzOnDemo1 = jobsOf((job) => job.skyhook === 'zzz' && job.node === 'demo-1')[0];
    expect(firstZzzOnDemo1?.seenAt).toBeLessThan(Math.max(...aOnDemo0.map((job) => job.doneAt ?? Infinity)));
    expect(jobsOf((job) => ['b', 'c', 'd', 'e'].includes(job.skyhook))).toEqual([]);
    await waitForSkyhook(h, 'c', (scr) => scr.status?.status === 'waiting');
    expect(
      await metricEventually(
        'skyhook_node_waiting_count',
        { skyhook_name: 'zzz', reason: 'TaintNotTolerable' },
        (v) => v === undefined,
      ),
    ).toBeUndefined();
    expect(await metric('skyhook_status', { skyhook_name: 'c', status: 'waiting' })).toBe(1);

    // 4. Resume b: b, c and e complete on both nodes, d stays disabled and never runs.
    await mergePatchCustomObject(
      h.custom,
      { group: API_GROUP, version: API_VERSION, plural: 'skyhooks', name: 'b' },
      { metadata: { annotations: { [SKYHOOK_ANNOTATIONS.pause]: null } } },
    );
    for (const name of ['b', 'c', 'e']) {
      const done = await waitForSkyhook(h, name, (scr: Skyhook) => scr.status?.status === 'complete');
      expect(done.status).toMatchObject({ completeNodes: '2/2', nodesInProgress: 0 });
    }
    const final = await waitForStatuses('final statuses', (s) =>
      ['demo-0', 'demo-1'].every((node) => s[node]?.['e'] === 'complete'),
    );
    for (const node of ['demo-0', 'demo-1'])
      expect(final[node]).toEqual({
        zzz: 'complete',
        a: 'complete',
        b: 'complete',
        c: 'complete',
        d: 'disabled',
        e: 'complete',
      });
    expect((await waitForSkyhook(h, 'd', (scr) => scr.status?.status === 'disabled')).status?.status).toBe('disabled');
    expect(await metric('skyhook_status', { skyhook_name: 'd', status: 'disabled' })).toBe(1);
    expect(jobsOf((job) => job.skyhook === 'd')).toEqual([]);
    // One stage duration per node and stage of e (the fast package has no interrupt).
    const stages = await h.manager()!.runtime.metrics.registry.getSingleMetric('skyhook_stage_duration_seconds')!.get();
    const finished = stages.values.filter(
      (v) =>
        (v as { metricName?: string }).metricName === 'skyhook_stage_duration_seconds_count' &&
        v.labels['skyhook_name'] === 'e',
    );
    const perStage = (entries: [string, number][]): Record<string, number> =>
      entries.reduce<Record<string, number>>((acc, [stage, n]) => {
        acc[stage] = (acc[stage] ?? 0) + n;
        return acc;
      }, {});
    expect(perStage(finished.map((v) => [`${v.labels['stage']} ${v.labels['result']}`, v.value]))).toEqual(
      perStage(jobsOf((job) => job.skyhook === 'e').map((job) => [`${job.stage} succeeded`, 1])),
    );
    expect(finished.length).toBeGreaterThan(0);

    // Per node, one SCR at a time in priority-then-name order: each SCR's Jobs all finish before the next SCR's first Job.
    for (const node of ['demo-0', 'demo-1']) {
      const onNode = jobsOf((job) => job.node === node);
      const order = [...new Set(onNode.map((job) => job.skyhook))];
      expect(order).toEqual(['zzz', 'a', 'b', 'c', 'e']);
      for (let i = 1; i < order.length; i++) {
        const previousDone = Math.max(
          ...onNode.filter((job) => job.skyhook === order[i - 1]).map((job) => job.doneAt ?? Infinity),
        );
        const nextStart = Math.min(...onNode.filter((job) => job.skyhook === order[i]).map((job) => job.seenAt));
        expect(nextStart).toBeGreaterThanOrEqual(previousDone);
      }
      expect(onNode.map((job) => `${job.skyhook}/${job.stage}`)).toEqual(
        ['zzz', 'a', 'b', 'c', 'e'].flatMap((scr) => [`${scr}/apply`, `${scr}/config`]),
      );
    }
    // The node's own Events say the same: each SCR completed there in priority order (etcd's order).
    for (const node of ['demo-0', 'demo-1'])
      expect(await completionOrderFromEvents(node)).toEqual(['zzz', 'a', 'b', 'c', 'e']);
  }, 180_000);
});
