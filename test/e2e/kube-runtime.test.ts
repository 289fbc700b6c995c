/**
 * The controller runtime against a real API server: an informer with a label selector sees exactly
 * the matching ConfigMaps' adds, updates and deletes (and a label removed as a delete); two Lease
 * electors never lead together and the second takes over within seconds once the first releases;
 * readiness waits for every informer; and the `skyhook operator` process serves /healthz, /readyz
 * and /metrics, leads, and on SIGTERM exits 0 leaving the lease released.
 * (Restart of a broken watch is proven in test/unit/kube/informer.test.ts with a scripted API.)
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { CoreV1Event, KubernetesObject, V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import { makeClients, type KubeClients } from '../../src/kube/client.js';
import { Controller } from '../../src/kube/controller.js';
import { coreEventSink, EventRecorder } from '../../src/kube/events.js';
import { LeaderElector } from '../../src/kube/leader.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import { startManager } from '../../src/kube/manager.js';
import { InformerFactory } from '../../src/kube/runtime.js';
import { waitForList } from '../../src/kube/wait.js';
import { startControlPlane, type ControlPlane } from '../../src/sandbox/control-plane.js';
import { freePorts } from '../../src/sandbox/ports.js';
import { waitCrdsEstablished } from '../../src/sandbox/crds-established.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LEASE = '3c22c1ae.nvidia.com';

let cp: ControlPlane;
let clients: KubeClients;

async function createNamespace(name: string): Promise<void> {
  await clients.core.createNamespace({ body: { metadata: { name } } });
}

function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolveGet, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolveGet({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Resolves with the lease once `done` holds for it (watch-based). */
async function leaseWhere(
  namespace: string,
  done: (lease: V1Lease | undefined) => boolean,
  what: string,
): Promise<V1Lease | undefined> {
  const leases = await waitForList<V1Lease>(
    cp.kubeConfig,
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
    (all) => done(all.find((l) => l.metadata?.name === LEASE)),
    60_000,
    what,
  );
  return leases.find((l) => l.metadata?.name === LEASE);
}

beforeAll(async () => {
  cp = await startControlPlane({ nodes: 0 });
  // The operator's controllers watch our CRDs: without them their informers never sync.
  const crds = await cp.kubectl(['apply', '--server-side', '-k', 'config/crd']);
  if (crds.code !== 0) throw new Error(`installing the CRDs failed: ${crds.stderr}`);
  await waitCrdsEstablished(cp, ['crd', '--all']);
  clients = makeClients(cp.kubeConfig);
}, 120_000);

afterAll(async () => {
  await cp?.stop();
}, 120_000);

describe('informer against the API server', () => {
  it('sees add, update and delete of ConfigMaps matching its label selector, and nothing else', async () => {
    const ns = 'informer-e2e';
    await createNamespace(ns);
    const factory = new InformerFactory((path) => apiListWatch(cp.kubeConfig, path), { logger: silentLogger() });
    const informer = factory.informer<V1ConfigMap>(`/api/v1/namespaces/${ns}/configmaps`, {
      labelSelector: 'app=watched',
    });
    const seen: string[] = [];
    const waiters: { match: string; wake: () => void }[] = [];
    const note = (entry: string): void => {
      seen.push(entry);
      for (const w of waiters.filter((x) => x.match === entry)) w.wake();
    };
    const saw = (entry: string): Promise<void> =>
      seen.includes(entry) ? Promise.resolve() : new Promise((wake) => waiters.push({ match: entry, wake }));
    informer.on({
      add: (o) => note(`add ${o.metadata?.name} ${JSON.stringify(o.data ?? {})}`),
      update: (o) => note(`update ${o.metadata?.name} ${JSON.stringify(o.data ?? {})}`),
      delete: (o) => note(`delete ${o.metadata?.name}`),
    });
    const before = { metadata: { name: 'before', namespace: ns, labels: { app: 'watched' } }, data: { v: '0' } };
    await clients.core.createNamespacedConfigMap({ namespace: ns, body: before });
    try {
      await informer.waitForSync(30_000);
      await saw('add before {"v":"0"}');
      expect(factory.synced).toBe(true);

      const cm = (name: string, labels: Record<string, string>, v: string): V1ConfigMap => ({
        metadata: { name, namespace: ns, labels },
        data: { v },
      });
      await clients.core.createNamespacedConfigMap({ namespace: ns, body: cm('other', { app: 'other' }, '1') });
      await clients.core.createNamespacedConfigMap({ namespace: ns, body: cm('a', { app: 'watched' }, '1') });
      await saw('add a {"v":"1"}');
      await clients.core.replaceNamespacedConfigMap({
        name: 'a',
        namespace: ns,
        body: cm('a', { app: 'watched' }, '2'),
      });
      await saw('update a {"v":"2"}');
      expect(informer.get('a', ns)?.data).toEqual({ v: '2' });
      await clients.core.deleteNamespacedConfigMap({ name: 'a', namespace: ns });
      await saw('delete a');
      // Losing the label means leaving the selection: a delete, as the cache sees it.
      await clients.core.replaceNamespacedConfigMap({
        name: 'before',
        namespace: ns,
        body: cm('before', { app: 'gone' }, '0'),
      });
      await saw('delete before');
      expect(informer.list(ns)).toEqual([]);
      expect(seen.some((e) => e.includes('other'))).toBe(false);
      expect(informer.restarts).toBe(0);
    } finally {
      await factory.stopAll();
    }
  });
});

describe('waiting with a watch', () => {
  it('gives up with the abort reason when its signal aborts, not at its timeout', async () => {
    await createNamespace('wait-abort');
    const path = '/api/v1/namespaces/wait-abort/configmaps';
    const stop = new AbortController();
    const waiting = waitForList<V1ConfigMap>(
      cp.kubeConfig,
      path,
      (all) => all.some((cm) => cm.metadata?.name === 'two'),
      60_000,
      'ConfigMap two',
      {
        signal: stop.signal,
      },
    );
    // ConfigMap one comes (the watch is running), two never does: the caller knows the wait is hopeless.
    await clients.core.createNamespacedConfigMap({ namespace: 'wait-abort', body: { metadata: { name: 'one' } } });
    setTimeout(() => stop.abort(new Error('stalled: no progress')), 500);
    // The abort's own reason, not the 60 s timeout's: the wait ended because of the signal.
    await expect(waiting).rejects.toThrow('stalled: no progress');
    // An already aborted signal does not start a wait at all.
    await expect(
      waitForList(cp.kubeConfig, path, () => true, 60_000, 'anything', { signal: stop.signal }),
    ).rejects.toThrow('stalled: no progress');
  });
});

describe('events', () => {
  it('records a repeated event as one core/v1 Event whose count grows', async () => {
    const ns = 'events-e2e';
    await createNamespace(ns);
    const target = await clients.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'target', namespace: ns } },
    });
    const recorder = new EventRecorder(coreEventSink(clients.core), {
      component: 'skyhook-operator',
      instance: 'test',
      logger: silentLogger(),
      windowMs: 0,
    });
    const object = { ...target, apiVersion: 'v1', kind: 'ConfigMap' };
    for (let i = 0; i < 3; i++) {
      recorder.record(object, 'Warning', 'StageFailed', 'stage apply exited 2');
      await recorder.flush();
    }
    recorder.record(object, 'Normal', 'Applied', 'done');
    await recorder.flush();
    const events = await waitForList<CoreV1Event>(
      cp.kubeConfig,
      `/api/v1/namespaces/${ns}/events`,
      (all) => all.some((e) => e.count === 3),
      30_000,
      'the aggregated event',
    );
    expect(events).toHaveLength(2);
    const failed = events.find((e) => e.reason === 'StageFailed');
    expect(failed).toMatchObject({
      type: 'Warning',
      message: 'stage apply exited 2',
      count: 3,
      involvedObject: { kind: 'ConfigMap', name: 'target', namespace: ns, uid: target.metadata?.uid },
      source: { component: 'skyhook-operator' },
    });
    expect(Date.parse(String(failed?.lastTimestamp))).toBeGreaterThanOrEqual(
      Date.parse(String(failed?.firstTimestamp)),
    );
  });
});

describe('leader election on a Lease', () => {
  it('lets only one of two candidates lead, and hands over within seconds when the leader releases', async () => {
    const ns = 'leader-e2e';
    await createNamespace(ns);
    const leading: string[] = [];
    const lost: string[] = [];
    const started = new Map<string, number>();
    let bLeads: () => void = () => undefined;
    const bLeading = new Promise<void>((resolveLead) => (bLeads = resolveLead));
    const elector = (identity: string): LeaderElector =>
      new LeaderElector({
        coordination: clients.coordination,
        namespace: ns,
        name: LEASE,
        identity,
        logger: silentLogger(),
        onStartedLeading: () => {
          leading.push(identity);
          started.set(identity, Date.now());
          if (identity === 'candidate-b') bLeads();
        },
        onStoppedLeading: () => lost.push(identity),
      });
    const a = elector('candidate-a');
    const b = elector('candidate-b');
    void a.run();
    const first = await leaseWhere(
      ns,
      (l) => l?.spec?.holderIdentity === 'candidate-a',
      'candidate-a to hold the lease',
    );
    expect(first?.spec?.leaseDurationSeconds).toBe(15);
    // Microsecond times, as the API server requires.
    expect(String(first?.spec?.renewTime)).toMatch(/\.\d{6}Z$/);
    void b.run();
    // Two renewals by a while b campaigns (b retries every ~2 s): still a's lease, never b's.
    const firstRenew = String(first?.spec?.renewTime);
    let renewals = 0;
    let lastRenew = firstRenew;
    const otherHolders: string[] = [];
    await leaseWhere(
      ns,
      (l) => {
        if (l?.spec?.holderIdentity !== 'candidate-a') otherHolders.push(String(l?.spec?.holderIdentity));
        if (String(l?.spec?.renewTime) !== lastRenew) {
          lastRenew = String(l?.spec?.renewTime);
          renewals++;
        }
        return renewals >= 2 || otherHolders.length > 0;
      },
      'two renewals by candidate-a',
    );
    expect(otherHolders).toEqual([]);
    expect([a.isLeader, b.isLeader]).toEqual([true, false]);
    expect(leading).toEqual(['candidate-a']);

    // Every holder the lease has from here on, from a list-then-watch that misses no write.
    const holders: string[] = [];
    let watching: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      watching = resolve;
    });
    const takeover = leaseWhere(
      ns,
      (l) => {
        const holder = String(l?.spec?.holderIdentity ?? '');
        if (holders.at(-1) !== holder) holders.push(holder);
        if (holder === 'candidate-a') watching();
        return holder === 'candidate-b';
      },
      'candidate-b to take over',
    );
    await ready;
    await a.stop();
    expect(a.isLeader).toBe(false);
    const taken = await takeover;
    await bLeading; // its own write's answer may come after our watch saw the lease change
    expect(leading).toEqual(['candidate-a', 'candidate-b']);
    // Released, not expired: a's stop wrote the lease free before b took it (an expiry goes from a to b).
    expect(holders).toEqual(['candidate-a', '', 'candidate-b']);
    expect(taken?.spec?.leaseTransitions).toBe(1);
    expect(lost).toEqual([]);
    await b.stop();
    const released = await leaseWhere(ns, (l) => l?.spec?.holderIdentity === '', 'the lease to be released');
    expect(released?.spec?.leaseDurationSeconds).toBe(1);
  }, 60_000);
});

describe('operator manager', () => {
  it('is ready only when every informer a controller started has synced, and runs controllers while leading', async () => {
    const ns = 'manager-e2e';
    await createNamespace(ns);
    const reconciled: string[] = [];
    let poked: () => void = () => undefined;
    const pokeReconciled = new Promise<void>((resolvePoke) => (poked = resolvePoke));
    const manager = await startManager({
      kc: cp.kubeConfig,
      logger: silentLogger(),
      namespace: ns,
      identity: 'manager-test',
      leaderElect: true,
      leaseName: LEASE,
      health: { host: '127.0.0.1', port: 0 },
      metrics: { host: '127.0.0.1', port: 0 },
      controllers: [
        {
          name: 'probe',
          start: async (runtime) => {
            const controller = new Controller({
              name: 'probe',
              logger: runtime.logger,
              reconcile: async (key) => {
                reconciled.push(key);
                if (key === `${ns}/poke`) poked();
              },
            });
            controller.watch(runtime.informers.informer<KubernetesObject>(`/api/v1/namespaces/${ns}/configmaps`));
            // A resource the API server does not serve: this informer can never sync.
            controller.watch(
              runtime.informers.informer<KubernetesObject>('/apis/example.com/v1/widgets', { resource: 'widgets' }),
            );
            controller.start();
            return controller;
          },
        },
      ],
    });
    try {
      await leaseWhere(ns, (l) => l?.spec?.holderIdentity === 'manager-test', 'the manager to lead');
      await clients.core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'poke', namespace: ns } },
      });
      await pokeReconciled; // the controller runs (so it has made its informers) and its cache works
      expect((await httpGet(manager.healthPort, '/healthz')).status).toBe(200);
      const ready = await httpGet(manager.healthPort, '/readyz');
      expect(ready).toEqual({ status: 503, body: 'informers not synced: widgets\n' });
      const metrics = await httpGet(manager.metricsPort, '/metrics');
      expect(metrics.body).toContain(`leader_election_master_status{name="${LEASE}"} 1`);
      expect(metrics.body).toMatch(/skyhook_informer_synced\{resource="widgets"\} 0/);
      expect(metrics.body).toMatch(/skyhook_informer_restarts_total\{resource="widgets"\} [1-9]/);
    } finally {
      await manager.shutdown();
    }
    await leaseWhere(ns, (l) => l?.spec?.holderIdentity === '', 'the lease to be released');
  }, 60_000);
});

describe('skyhook operator process', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('serves /healthz, /readyz and /metrics, leads, and exits 0 on SIGTERM releasing its lease', async () => {
    const entry = `${REPO_ROOT}dist/cli/operator.js`;
    if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first (npm test does)`);
    const ns = 'operator-e2e';
    await createNamespace(ns);
    const [healthPort, metricsPort] = (await freePorts(2)) as [number, number];
    const proc = spawn(
      process.execPath,
      [
        `${REPO_ROOT}bin/skyhook.js`,
        'operator',
        '--kubeconfig',
        cp.kubeconfigPath,
        '--namespace',
        ns,
        '--health-port',
        `127.0.0.1:${healthPort}`,
        '--metrics-port',
        `127.0.0.1:${metricsPort}`,
        '--log-level',
        'info',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    let output = '';
    proc.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolveExit) => proc.on('exit', (code) => resolveExit(code)));
    const logged = (message: string): Promise<void> =>
      new Promise<void>((resolveLog, reject) => {
        const check = (): void => {
          if (output.includes(`"msg":"${message}"`)) resolveLog();
        };
        check();
        proc.stdout?.on('data', check);
        void exited.then((code) =>
          reject(new Error(`operator exited with ${code} before logging '${message}':\n${output}`)),
        );
      });
    await logged('operator started');
    await logged('acquired the lease; leading');

    const lease = await leaseWhere(ns, (l) => Boolean(l?.spec?.holderIdentity), 'the operator to lead');
    expect(lease?.spec?.holderIdentity).toMatch(/_[0-9a-f-]{36}$/);
    expect(await httpGet(healthPort, '/healthz')).toEqual({ status: 200, body: 'ok\n' });
    // Ready once the controllers' informers have synced (they start after the lease is won).
    const readyBy = Date.now() + 20_000;
    let ready = await httpGet(healthPort, '/readyz');
    while (ready.status !== 200 && Date.now() < readyBy) {
      await new Promise((r) => setTimeout(r, 100));
      ready = await httpGet(healthPort, '/readyz');
    }
    expect(ready).toEqual({ status: 200, body: 'ok\n' });
    expect((await httpGet(healthPort, '/nope')).status).toBe(404);
    const metrics = await httpGet(metricsPort, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain(`leader_election_master_status{name="${LEASE}"} 1`);
    expect(metrics.body).toContain('process_resident_memory_bytes');

    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    const released = await leaseWhere(ns, (l) => l?.spec?.holderIdentity === '', 'the lease to be released');
    expect(released?.spec?.leaseDurationSeconds).toBe(1);
    expect(output).toContain('"msg":"operator stopped"');
  }, 60_000);
});
