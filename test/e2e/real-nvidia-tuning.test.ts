/**
 * NVIDIA's tuning 1.1.4 package (the image `npm run images` builds from NVIDIA's files, unchanged)
 * on a real systemd node: sysctl.conf (network keys only: the rest of /proc/sys is the machine's and
 * read-only here), ulimit.conf and service_containerd.conf, with a containerd restart as the
 * package's interrupt and as the configInterrupt of service_containerd.conf. The drop-ins land under the node's /etc with upstream's names, the live values change
 * after the interrupt (sysctl in the node's network namespace, containerd's LimitNOFILE as systemd
 * reports it), post-interrupt-check passes; a config change re-runs config and its interrupt;
 * removing the package runs uninstall, which removes the drop-ins.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Package } from '../../src/api/skyhook.js';
import {
  createGroupSkyhook,
  GROUP_LABEL,
  recordStageJobs,
  setSkyhookPackages,
  startRealHarness,
  waitForSkyhook,
  type RealHarness,
} from './real-harness.js';

const NODE = 'real-0';
const GROUP = 'tuning';
let h: RealHarness;
const started = Date.now();

beforeAll(async () => {
  h = await startRealHarness({ realNodes: 1, realNodeLabels: { [GROUP_LABEL]: GROUP } });
  const tuning = h.images.nvidiaPackages.find((image) => image.name === 'tuning');
  if (!tuning || tuning.standIn)
    throw new Error("NVIDIA's tuning image was not built from NVIDIA's files (../shared/upstream-packages missing?)");
}, 600_000);

afterAll(async () => {
  await h?.stop();
  console.log(`real-nvidia-tuning: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, 120_000);

const inNode = async (...argv: string[]): Promise<string> => (await h.node(NODE).exec(argv)).trim();
const onNode = (path: string): string => join(h.node(NODE).rootDir, path);
/** True once `stage` of the tuning package succeeded on the node (so a `complete` status is the new one). */
const ran = (jobs: Awaited<ReturnType<typeof recordStageJobs>>, stage: string): boolean =>
  [...jobs.jobs.values()].some((j) => j.node === NODE && j.stage === stage && j.succeeded);
const DROP_INS = {
  sysctl: 'etc/sysctl.d/999-tuning-tuning.conf',
  limits: 'etc/security/limits.d/999-tuning-tuning.conf',
  containerd: 'etc/systemd/system/containerd.service.d/999-tuning-tuning.conf',
};

function tuningPackage(somaxconn: number, finTimeout: number, nofile: number): Package {
  return {
    version: '1.1.4',
    image: 'ghcr.io/nvidia/skyhook-packages/tuning',
    configMap: {
      'sysctl.conf': `net.core.somaxconn=${somaxconn}\nnet.ipv4.tcp_fin_timeout=${finTimeout}`,
      'ulimit.conf': 'nofile=8192',
      // Below this machine's hard limit (root here lacks CAP_SYS_RESOURCE to raise it).
      'service_containerd.conf': `[Service]\nLimitNOFILE=${nofile}`,
    },
    // The install's interrupt; a later change of the key runs its configInterrupt.
    interrupt: { type: 'service', services: ['containerd'] },
    configInterrupts: { 'service_containerd.conf': { type: 'service', services: ['containerd'] } },
  } as Package;
}

describe("NVIDIA's tuning package on a real systemd node", () => {
  it('writes the drop-ins, restarts containerd with its new limit, and post-interrupt-check sees the live values', async () => {
    const pidBefore = await inNode('systemctl', 'show', '-p', 'MainPID', '--value', 'containerd');
    expect(await inNode('systemctl', 'show', '-p', 'LimitNOFILE', '--value', 'containerd')).not.toBe('16384');
    const jobs = await recordStageJobs(h);
    await createGroupSkyhook(h, 'tuning', GROUP, { packages: { tuning: tuningPackage(4096, 33, 16384) } });
    await waitForSkyhook(h, 'tuning', (s) => s.status?.status === 'complete', 300_000);
    await jobs.stop();

    const stages = jobs.stagesByNode('tuning')[NODE] ?? [];
    expect(stages.filter((s) => ['config', 'interrupt', 'post-interrupt'].includes(s))).toEqual([
      'config',
      'interrupt',
      'post-interrupt',
    ]);
    expect([...jobs.jobs.values()].every((j) => j.succeeded && !j.failed)).toBe(true);
    expect(readFileSync(onNode(DROP_INS.sysctl), 'utf8')).toBe('net.core.somaxconn=4096\nnet.ipv4.tcp_fin_timeout=33');
    expect(readFileSync(onNode(DROP_INS.limits), 'utf8')).toBe('* hard nofile 8192\n');
    expect(readFileSync(onNode(DROP_INS.containerd), 'utf8')).toBe('[Service]\nLimitNOFILE=16384');
    expect(await inNode('sysctl', '-n', 'net.core.somaxconn', 'net.ipv4.tcp_fin_timeout')).toBe('4096\n33');
    expect(await inNode('systemctl', 'show', '-p', 'LimitNOFILE', '--value', 'containerd')).toBe('16384');
    expect(await inNode('systemctl', 'show', '-p', 'MainPID', '--value', 'containerd')).not.toBe(pidBefore);
  }, 420_000);

  it('a config change (sysctl.conf and service_containerd.conf) re-runs config and its interrupt with the new values', async () => {
    const pidBefore = await inNode('systemctl', 'show', '-p', 'MainPID', '--value', 'containerd');
    const jobs = await recordStageJobs(h);
    await setSkyhookPackages(h, 'tuning', { tuning: tuningPackage(2048, 44, 12288) });
    await waitForSkyhook(h, 'tuning', (s) => s.status?.status === 'complete' && ran(jobs, 'post-interrupt'), 300_000);
    await jobs.stop();
    const stages = jobs.stagesByNode('tuning')[NODE] ?? [];
    expect(stages).toEqual(expect.arrayContaining(['config', 'interrupt', 'post-interrupt']));
    expect(await inNode('sysctl', '-n', 'net.core.somaxconn', 'net.ipv4.tcp_fin_timeout')).toBe('2048\n44');
    expect(readFileSync(onNode(DROP_INS.sysctl), 'utf8')).toBe('net.core.somaxconn=2048\nnet.ipv4.tcp_fin_timeout=44');
    expect(await inNode('systemctl', 'show', '-p', 'LimitNOFILE', '--value', 'containerd')).toBe('12288');
    expect(await inNode('systemctl', 'show', '-p', 'MainPID', '--value', 'containerd')).not.toBe(pidBefore);
  }, 420_000);

  it('removing the package runs uninstall: the drop-ins are gone', async () => {
    const jobs = await recordStageJobs(h);
    await setSkyhookPackages(h, 'tuning', {});
    await waitForSkyhook(h, 'tuning', (s) => s.status?.status === 'complete' && ran(jobs, 'uninstall'), 300_000);
    await jobs.stop();
    expect(jobs.stagesByNode('tuning')[NODE]).toContain('uninstall');
    for (const dropIn of Object.values(DROP_INS)) expect(existsSync(onNode(dropIn))).toBe(false);
  }, 420_000);
});
