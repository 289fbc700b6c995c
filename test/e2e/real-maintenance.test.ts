/**
 * Node-initiated maintenance on real nodes (kubelet + containerd; the daemon from config/maintenance
 * as a real DaemonSet with its own RBAC; the operator's maintenance controller in this process):
 *   - Kustodian: the example script (docs/examples/maintenance.sh, unchanged) writes
 *     /var/maintenance-required on two nodes at once; with maxConcurrent 1 one node is cordoned and
 *     drained (a real pod evicted), gets /var/maintenance-in-progress, finishes and is uncordoned
 *     before the other is cordoned; `kubectl skyhook maintenance status` shows the holder and the
 *     queued node, and `release` refuses the live slot;
 *   - Kured: /var/run/reboot-required on a node, held by a blocking pod and then by a firing alert of
 *     the policy's alert gate (a stand-in Prometheus in this process), each visible in the policy's
 *     queue with its reason, then a real reboot through the interrupts' reboot path and the node's
 *     systemd (a new boot ID; the last boot's journal ends in systemd's reboot) and uncordon.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { MaintenancePolicy } from '../../src/api/maintenance-policy.js';
import { API_GROUP, API_VERSION, KINDS } from '../../src/api/names.js';
import { maintenanceClaim } from '../../src/jobs/cordon/claims.js';
import { Informer } from '../../src/kube/informer.js';
import { apiListWatch } from '../../src/kube/list-watch.js';
import { silentLogger } from '../../src/kube/logger.js';
import type { Manager } from '../../src/kube/manager.js';
import { waitForValue } from './eventually.js';
import { recordNodeTimeline } from './node-timeline.js';
import {
  daemonPod,
  deployDaemon,
  installScript,
  onHost,
  pinnedPod,
  runScriptEverywhere,
  SCRIPT_DAEMONSET,
  startMaintenanceController,
} from './real-maintenance-harness.js';
import {
  isReady,
  kubectlOk,
  NAMESPACE,
  REPO_ROOT,
  reportedBootId,
  startRealHarness,
  type RealHarness,
} from './real-harness.js';

const NODES = ['real-0', 'real-1'];
/** How often the host files are looked at. */
const POLL_MS = 50;
const POLICY = 'real';
const CLAIM = maintenanceClaim(POLICY);
let h: RealHarness;
let manager: Manager | undefined;
/** A stand-in Prometheus: `ALERTS` always has Watchdog (filtered out by the policy) and NodeDown while `firing`. */
let prometheus: Server | undefined;
const alerts = { firing: false };

const policyRef = { group: API_GROUP, version: API_VERSION, plural: KINDS.maintenancePolicy.plural, name: POLICY };
const getPolicy = async (): Promise<MaintenancePolicy> =>
  (await h.custom.getClusterCustomObject(policyRef)) as MaintenancePolicy;
const hostFile = (node: string, path: string): string => join(h.node(node).rootDir, path);
const getNode = (name: string): Promise<V1Node> => h.core.readNode({ name });

/** `skyhook maintenance …` (the kubectl plugin) against the test cluster. */
function plugin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, 'bin/skyhook.js'), 'maintenance', ...args, '--kubeconfig', h.cp.kubeconfigPath],
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function startPrometheus(): Promise<string> {
  const sample = (alertname: string) => ({
    metric: { __name__: 'ALERTS', alertname, alertstate: 'firing' },
    value: [0, '1'],
  });
  prometheus = createServer((_req, res) => {
    const result = [sample('Watchdog'), ...(alerts.firing ? [sample('NodeDown')] : [])];
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }));
  });
  return new Promise((resolve) =>
    prometheus!.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(prometheus!.address() as AddressInfo).port}`),
    ),
  );
}

beforeAll(async () => {
  const prometheusUrl = await startPrometheus();
  h = await startRealHarness({ realNodes: 2, realNodeLabels: { maintenance: 'enabled' }, operatorInProcess: false });
  manager = await startMaintenanceController(h);
  installScript(h, NODES);
  await deployDaemon(h);
  // Each daemon is up once it has made its node's Lease (through the API server, with its own token).
  for (const node of NODES)
    await waitForValue(
      `the maintenance daemon's Lease of ${node}`,
      async () =>
        (await h.cp.kubectl(['-n', NAMESPACE, 'get', 'lease', `maintenance-${node}`])).code === 0 ? true : undefined,
      { timeoutMs: 120_000, intervalMs: 250 },
    );
  const policy = {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: 'MaintenancePolicy',
    metadata: { name: POLICY },
    spec: {
      nodeSelector: { matchLabels: { maintenance: 'enabled' } },
      maxConcurrent: 1,
      protocols: { maintenance: {}, reboot: {} },
      drainOptions: { timeoutSeconds: 120 },
      blockingPodSelectors: [{ matchLabels: { 'maintenance-e2e': 'blocker' } }],
      alertGate: { prometheusUrl, alertFilterRegexp: '^Watchdog$' },
    },
  };
  await kubectlOk(h, ['apply', '-f', '-'], JSON.stringify(policy));
}, 600_000);

afterAll(async () => {
  await manager?.shutdown();
  await h?.stop();
  prometheus?.closeAllConnections();
  await new Promise((resolve) => prometheus?.close(resolve) ?? resolve(undefined));
}, 120_000);

/**
 * When each node's in-progress file was first seen, and last seen present, polled every 50 ms. The
 * file's removal lies between its last sighting and the next poll, so "last seen present before the
 * uncordon" can only fail when the file really outlived the uncordon, however late a poll runs.
 */
function watchHostFiles(): { seen: Record<string, { inProgress?: number; lastPresent?: number }>; stop(): void } {
  const seen: Record<string, { inProgress?: number; lastPresent?: number }> = Object.fromEntries(
    NODES.map((node) => [node, {}]),
  );
  const timer = setInterval(() => {
    for (const node of NODES) {
      const s = seen[node]!;
      const present = existsSync(hostFile(node, 'var/maintenance-in-progress'));
      if (present) {
        s.inProgress ??= Date.now();
        s.lastPresent = Date.now();
      }
    }
  }, POLL_MS);
  return { seen, stop: () => clearInterval(timer) };
}

describe('node-initiated maintenance on real nodes', () => {
  it('the example script on two nodes at once: one node at a time is cordoned, drained, maintained and uncordoned', async () => {
    for (const node of NODES)
      await h.core.createNamespacedPod({ namespace: 'default', body: pinnedPod(h, `victim-${node}`, node) });
    await waitForValue(
      'the victims running',
      async () => {
        const pods = await h.core.listNamespacedPod({ namespace: 'default' });
        return pods.items.filter((p) => p.status?.phase === 'Running').length === NODES.length ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const gone: Record<string, number> = {};
    const pods = new Informer<V1Pod>(apiListWatch(h.cp.kubeConfig, '/api/v1/namespaces/default/pods'), {
      resource: 'victims',
      logger: silentLogger(),
    });
    pods.on({
      delete: (pod) => {
        gone[pod.spec?.nodeName ?? ''] ??= Date.now();
      },
    });
    pods.start();
    await pods.waitForSync(30_000);
    const timeline = await recordNodeTimeline(h, NODES);
    const files = watchHostFiles();
    const started = Date.now();
    await runScriptEverywhere(h, 6);

    // While the first node holds the slot: the plugin shows the holder and the queued node, and refuses to release it.
    const first = await waitForValue(
      'a node in maintenance',
      async () => NODES.find((n) => files.seen[n]?.inProgress),
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    const second = NODES.find((n) => n !== first)!;
    type Row = { node: string; state: string; reason?: string };
    // The policy's status is written shortly after the Leases: ask until it has caught up.
    const rows = await waitForValue(
      'maintenance status to show the holder and the queued node',
      async () => {
        const status = await plugin(['status', '-o', 'json']);
        expect(status.code).toBe(0);
        const all = JSON.parse(status.stdout) as Row[];
        const queued = all.find((r) => r.node === second);
        return all.find((r) => r.node === first)?.state === 'holding' && queued?.reason ? all : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    expect(rows.find((r) => r.node === second)).toMatchObject({ state: 'queued', reason: 'MaxConcurrent' });
    const release = await plugin(['release', first, '--yes']);
    expect(release).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/maintenance script has the node.*--force/s),
    });

    await waitForValue(
      'both maintenances done',
      async () => {
        const done = (await getPolicy()).status?.recentCompletions?.map((c) => c.node) ?? [];
        return NODES.every((n) => done.includes(n)) ? true : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 250 },
    );
    await waitForValue(
      'both nodes uncordoned',
      async () => {
        const nodes = await Promise.all(NODES.map(getNode));
        return nodes.every((n) => !n.spec?.unschedulable && !n.metadata?.annotations?.[CLAIM]) ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    files.stop();
    // Seen uncordoned by a read; the timeline's watch may show it a moment later.
    await timeline.uncordoned();
    await timeline.stop();
    await pods.stop();
    console.log(`maintenance of 2 real nodes one at a time: ${Date.now() - started} ms`);

    // Never both out of service; the second cordoned only after the first was uncordoned.
    expect(timeline.maxCordoned()).toBe(1);
    const [a] = timeline.spansOf(first);
    const [b] = timeline.spansOf(second);
    expect(timeline.spansOf(first)).toHaveLength(1);
    expect(timeline.spansOf(second)).toHaveLength(1);
    expect(a!.to).toBeLessThanOrEqual(b!.from);
    for (const [node, span] of [
      [first, a!],
      [second, b!],
    ] as const) {
      const seen = files.seen[node]!;
      // Cordoned, then the victim evicted, then the in-progress file, then the file gone, then uncordoned.
      expect(gone[node]).toBeGreaterThanOrEqual(span.from);
      expect(seen.inProgress).toBeGreaterThanOrEqual(gone[node]!);
      expect(seen.lastPresent).toBeLessThanOrEqual(span.to!);
      expect(existsSync(hostFile(node, 'var/maintenance-required'))).toBe(false);
      const log = readFileSync(hostFile(node, 'var/log/maintenance-example.log'), 'utf8');
      expect(log).toMatch(/asked for maintenance[\s\S]*start \(cordoned and drained\)[\s\S]*done/);
    }
    // Both scripts asked while the first node was out of service; the second node got its go only
    // after the first was back in service.
    const askedAt = (node: string): number =>
      Date.parse(
        /^(\S+) asked for maintenance/.exec(
          readFileSync(hostFile(node, 'var/log/maintenance-example.log'), 'utf8'),
        )![1]!,
      );
    expect(askedAt(first)).toBeLessThan(a!.to!);
    expect(askedAt(second)).toBeLessThan(a!.to!);
    expect(files.seen[second]!.inProgress).toBeGreaterThan(a!.to!);
    await kubectlOk(h, ['-n', 'default', 'delete', 'daemonset', SCRIPT_DAEMONSET, '--wait=true']);
  }, 420_000);

  it('/var/run/reboot-required: held by a blocking pod, then by a firing alert, visibly; then a real reboot (new boot ID) and uncordon', async () => {
    const node = 'real-0';
    const bootBefore = await reportedBootId(h, node);
    const bootsBefore = h.node(node).boots.length;
    await h.core.createNamespacedPod({
      namespace: 'default',
      body: pinnedPod(h, 'blocker', node, { 'maintenance-e2e': 'blocker' }),
    });
    const timeline = await recordNodeTimeline(h, [node]);
    // On a timeout: the node's queue entry and the pods the blockers would list (a rare failure read from its message).
    const queueAndPods = async (): Promise<string> => {
      const queued = (await getPolicy()).status?.queue?.find((q) => q.node === node);
      const pods = await h.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
      const described = pods.items.map(
        (p) =>
          `${p.metadata?.namespace}/${p.metadata?.name} ${p.status?.phase}${p.metadata?.deletionTimestamp ? ' (deleting)' : ''}`,
      );
      return `queue entry ${JSON.stringify(queued)}; alerts firing ${alerts.firing}; pods on the node: ${described.join(', ')}`;
    };
    expect(await onHost(h, node, ['touch', '/var/run/reboot-required'])).toMatchObject({ code: 0 });
    const held = await waitForValue(
      'the reboot held by the blocking pod',
      async () => {
        const queued = (await getPolicy()).status?.queue?.find((q) => q.node === node);
        return queued?.reason === 'BlockingPods' ? queued : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, describe: queueAndPods },
    );
    expect(held).toMatchObject({ protocol: 'reboot', message: expect.stringContaining('default/blocker') });
    expect((await getNode(node)).spec?.unschedulable).toBeFalsy();
    expect(await reportedBootId(h, node)).toBe(bootBefore);

    // The blocking pod goes while an alert fires: the alert gate holds the reboot now (Watchdog is filtered out).
    alerts.firing = true;
    await h.core.deleteNamespacedPod({ namespace: 'default', name: 'blocker', gracePeriodSeconds: 0 });
    const alerted = await waitForValue(
      'the reboot held by the alert',
      async () => {
        const queued = (await getPolicy()).status?.queue?.find((q) => q.node === node);
        return queued?.reason === 'ActiveAlerts' ? queued : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, describe: queueAndPods },
    );
    expect(alerted.message).toBe('active alerts: NodeDown');
    expect((await getNode(node)).spec?.unschedulable).toBeFalsy();
    expect(await reportedBootId(h, node)).toBe(bootBefore);

    const started = Date.now();
    alerts.firing = false;
    await waitForValue(
      'the node back with a new boot ID, Ready and uncordoned',
      async () => {
        const n = await getNode(node);
        const back = n.status?.nodeInfo?.bootID !== bootBefore && isReady(n) && !n.spec?.unschedulable;
        const done = (await getPolicy()).status?.recentCompletions?.some(
          (c) => c.node === node && c.protocol === 'reboot',
        );
        return back && done && !n.metadata?.annotations?.[CLAIM] ? true : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 250 },
    );
    await timeline.uncordoned();
    await timeline.stop();
    console.log(`maintenance reboot of a real node: ${Date.now() - started} ms`);

    // Exactly one real reboot, inside the maintenance cordon; the kubelet reports that boot's ID.
    expect(h.node(node).boots).toHaveLength(bootsBefore + 1);
    const boot = h.node(node).boots.at(-1)!;
    expect(await reportedBootId(h, node)).toBe(boot.bootId);
    // Through the node's systemd: the previous boot's journal ends in its orderly reboot.
    const lastBoot = await h.node(node).exec(['journalctl', '-b', '-1', '--no-pager', '-o', 'cat']);
    expect(lastBoot).toMatch(/Reached target.*System Reboot/);
    const [span] = timeline.spansOf(node);
    expect(span!.from).toBeLessThan(boot.at);
    expect(span!.to).toBeGreaterThan(boot.at);
    // /run is new after a boot: the sentinel is gone, and the daemon does not ask again.
    await waitForValue('the daemon running again', () => daemonPod(h, node).catch(() => undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    expect((await onHost(h, node, ['test', '-e', '/var/run/reboot-required'])).code).not.toBe(0);
  }, 360_000);
});
