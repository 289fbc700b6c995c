/**
 * Every interrupt type the SCR offers, on a real node whose PID 1 is systemd (containerd, the API
 * relay and the kubelet are its units), run by the reboot pod through the node's own systemctl:
 *   - the node boots systemd with the units active and nothing failed;
 *   - `service` [containerd]: containerd's MainPID changes, a DaemonSet's pod keeps its container
 *     through the restart, the node is cordoned before the interrupt and uncordoned after;
 *   - `restartAllServices` (`service procps force-reload`): systemd-sysctl runs again;
 *   - `noop`: nothing restarts;
 *   - `reboot`: through systemd (journald records the new boot under the node's boot ID).
 * Each stage runs once. The shellscript package image (project build, NVIDIA's name) runs the steps.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import type { Interrupt } from '../../src/api/skyhook.js';
import { waitForList } from '../../src/kube/wait.js';
import { recordNodeTimeline } from './node-timeline.js';
import {
  createGroupSkyhook,
  GROUP_LABEL,
  recordStageJobs,
  reportedBootId,
  startRealHarness,
  waitForSkyhook,
  type RealHarness,
} from './real-harness.js';

const NODE = 'real-0';
const GROUP = 'systemd';
const IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript';
let h: RealHarness;
const started = Date.now();

beforeAll(async () => {
  h = await startRealHarness({ realNodes: 1, realNodeLabels: { [GROUP_LABEL]: GROUP } });
}, 600_000);

afterAll(async () => {
  await h?.stop();
  console.log(`real-systemd-interrupts: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, 120_000);

const inNode = async (...argv: string[]): Promise<string> => (await h.node(NODE).exec(argv)).trim();
const mainPid = (unit: string): Promise<string> => inNode('systemctl', 'show', '-p', 'MainPID', '--value', unit);
const startedAt = (unit: string): Promise<string> =>
  inNode('systemctl', 'show', '-p', 'ExecMainStartTimestampMonotonic', '--value', unit);

/** Runs one Skyhook whose package asks for `interrupt`; returns its stage Jobs and the node's cordon spans. */
async function runInterrupt(name: string, interrupt: Interrupt) {
  const timeline = await recordNodeTimeline(h, [NODE]);
  const jobs = await recordStageJobs(h);
  await createGroupSkyhook(h, name, GROUP, {
    packages: {
      [name]: {
        version: '1.1.0',
        image: IMAGE,
        interrupt,
        configMap: { 'apply.sh': 'echo applied', 'config.sh': 'echo configured' },
      },
    },
  });
  const done = await waitForSkyhook(h, name, (s) => s.status?.status === 'complete', 240_000);
  await timeline.uncordoned();
  await Promise.all([timeline.stop(), jobs.stop()]);
  expect(done.status).toMatchObject({ completeNodes: '1/1' });
  const onNode = [...jobs.jobs.values()].filter((j) => j.node === NODE && j.skyhook === name);
  expect(onNode.map((j) => j.stage)).toEqual(['apply', 'config', 'interrupt', 'post-interrupt']);
  expect(onNode.every((j) => j.succeeded && !j.failed)).toBe(true);
  const interruptJob = onNode.find((j) => j.stage === 'interrupt')!;
  return { spans: timeline.spansOf(NODE), interruptJob, onNode };
}

describe('interrupts on a real systemd node', () => {
  it('boots systemd as PID 1 with containerd, the relay and the kubelet as active units, none failed', async () => {
    expect(await inNode('cat', '/proc/1/comm')).toBe('systemd');
    expect(await inNode('systemctl', 'is-system-running', '--wait')).toBe('running');
    expect(
      await inNode(
        'systemctl',
        'is-active',
        'containerd',
        'kubelet',
        'sandbox-api-relay',
        'systemd-journald',
        'dbus.socket',
      ),
    ).toBe('active\nactive\nactive\nactive\nactive');
    expect(await inNode('systemctl', 'list-units', '--failed', '--no-legend', '--plain')).toBe('');
    expect(await inNode('cat', '/proc/sys/kernel/random/boot_id')).toBe(h.node(NODE).boots.at(-1)!.bootId);
  }, 60_000);

  it('service [containerd]: new MainPID, a DaemonSet pod keeps its container, cordoned around the interrupt', async () => {
    const apps = h.cp.kubeConfig.makeApiClient(AppsV1Api);
    const labels = { app: 'survivor' };
    await apps.createNamespacedDaemonSet({
      namespace: 'default',
      body: {
        metadata: { name: 'survivor' },
        spec: {
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
          },
        },
      },
    });
    const podsPath = '/api/v1/namespaces/default/pods?labelSelector=app%3Dsurvivor';
    const ready = (ps: V1Pod[]) => ps.length === 1 && ps[0]!.status?.containerStatuses?.[0]?.ready === true;
    const [before] = await waitForList<V1Pod>(h.cp.kubeConfig, podsPath, ready, 90_000, 'survivor running');
    const pidBefore = await mainPid('containerd');

    const { spans, interruptJob, onNode } = await runInterrupt('svc', { type: 'service', services: ['containerd'] });

    expect(await mainPid('containerd')).not.toBe(pidBefore);
    expect(await inNode('systemctl', 'is-active', 'containerd')).toBe('active');
    const [after] = await waitForList<V1Pod>(h.cp.kubeConfig, podsPath, ready, 60_000, 'survivor still running');
    expect(after!.metadata?.uid).toBe(before!.metadata?.uid);
    expect(after!.status?.containerStatuses?.[0]?.containerID).toBe(
      before!.status?.containerStatuses?.[0]?.containerID,
    );
    expect(after!.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.from).toBeLessThan(interruptJob.seenAt);
    expect(spans[0]!.to).toBeGreaterThan(Math.max(...onNode.map((j) => j.doneAt ?? Infinity)));
    expect(h.node(NODE).boots).toHaveLength(1);
  }, 300_000);

  it('restartAllServices: systemd-sysctl (procps) runs again; containerd keeps running', async () => {
    const sysctlBefore = await startedAt('systemd-sysctl');
    const { spans } = await runInterrupt('all', { type: 'restartAllServices' });
    expect(Number(await startedAt('systemd-sysctl'))).toBeGreaterThan(Number(sysctlBefore));
    expect(spans).toHaveLength(1);
    expect(h.node(NODE).boots).toHaveLength(1);
  }, 300_000);

  it('noop: no service restarts and no reboot', async () => {
    const pidBefore = await mainPid('containerd');
    const kubeletBefore = await mainPid('kubelet');
    await runInterrupt('noop', { type: 'noop' });
    expect(await mainPid('containerd')).toBe(pidBefore);
    expect(await mainPid('kubelet')).toBe(kubeletBefore);
    expect(h.node(NODE).boots).toHaveLength(1);
  }, 300_000);

  it('reboot: through systemd, back with a new boot ID that journald and the kubelet report', async () => {
    const bootBefore = h.node(NODE).boots.at(-1)!.bootId;
    const { spans } = await runInterrupt('reboot', { type: 'reboot' });
    const boots = h.node(NODE).boots;
    expect(boots).toHaveLength(2);
    expect(boots[1]!.bootId).not.toBe(bootBefore);
    expect(await reportedBootId(h, NODE)).toBe(boots[1]!.bootId);
    // journald keeps both boots under the node's own boot IDs; the first one ended in systemd's reboot.
    const listed = await inNode('journalctl', '--list-boots', '--no-pager');
    for (const boot of boots) expect(listed).toContain(boot.bootId.replaceAll('-', ''));
    expect(await inNode('journalctl', '-b', '-1', '--no-pager', '-o', 'cat')).toMatch(/Reached target.*System Reboot/);
    expect(spans).toHaveLength(1);
  }, 300_000);
});
