/**
 * NVIDIA's package images (built by `npm run images` from NVIDIA's files, unchanged) on one real
 * systemd node, one control plane and operator for the whole file. Each package has its own Skyhook;
 * one that ends erroring on purpose is deleted after its test, so it holds no later Skyhook back.
 *   - shellscript 1.1.1 runs the upstream README demo (the demo's SCR unchanged but for the image
 *     tag): apply then config write /skyhook-hello-world into the node's root;
 *   - tuning 1.1.4: sysctl.conf (network keys only: the rest of /proc/sys is the machine's and
 *     read-only here), ulimit.conf and service_containerd.conf, with a containerd restart as the
 *     package's interrupt and as the configInterrupt of service_containerd.conf. The drop-ins land
 *     under the node's /etc with upstream's names, the live values change after the interrupt (sysctl
 *     in the node's network namespace, containerd's LimitNOFILE as systemd reports it),
 *     post-interrupt-check passes; a config change re-runs config and its interrupt; removing the
 *     package runs uninstall, which removes the drop-ins;
 *   - tuned 1.2.0: installed by the package itself through the node's apt, which reaches Debian's
 *     archive the way this machine does (the node's apt proxy forwards only to this machine's apt
 *     source hosts); a profile from the SCR's configMap (network sysctls only: the only per-node
 *     kernel settings here) is active (`tuned-adm active`), applied, and every check passes;
 *   - nvidia-tuned 0.2.3: its `nvidia-h100-inference` profile is active after the reboot interrupt,
 *     and the post-interrupt-check really checks it: tuned_profile, written by the config stage into
 *     the package's configmaps directory, is still there (the check would only warn without it), the
 *     active-profile check passes, and only `tuned-adm verify` fails: the profile sets global kernel
 *     settings and kernel arguments (vm.swappiness, kernel.sched_*, isolcpus, hugepages), which a
 *     node sharing the machine's kernel cannot change;
 *   - kdump 1.1.0: apply installs kdump-tools through the node's apt and enables its unit; what fails
 *     here is the crash kernel itself (printed, and asserted exactly): a node sharing the machine's
 *     kernel has no crashkernel= reservation and cannot load a crash kernel.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Package } from '../../src/api/skyhook.js';
import {
  createGroupSkyhook,
  DEMO_LABEL,
  GROUP_LABEL,
  kubectlOk,
  recordStageJobs,
  REPO_ROOT,
  requireNvidiaImages,
  setSkyhookPackages,
  stageLogs,
  startRealHarness,
  waitForSkyhook,
  waitForSkyhookGone,
  type RealHarness,
} from './real-harness.js';

const NODE = 'real-0';
const GROUP = 'nvidia';
const README_DEMO = resolve(REPO_ROOT, '../shared/examples/skyhook-readme-demo.yaml');
const UPSTREAM_SHELLSCRIPT = '../shared/upstream-packages/at-release-tags/shellscript-1.1.1';
let h: RealHarness;
const started = Date.now();

beforeAll(async () => {
  // One attempt per stage Job: the steps expected to fail (nvidia-tuned's verify, kdump's GRUB) fail
  // at once instead of after the Job controller's backoff, and the others must pass first time.
  h = await startRealHarness({
    realNodes: 1,
    realNodeLabels: { ...DEMO_LABEL, [GROUP_LABEL]: GROUP },
    skyhook: { settings: { jobBackoffLimit: 0 } },
  });
  requireNvidiaImages(h, ['shellscript', 'tuning', 'tuned', 'nvidia-tuned', 'kdump']);
}, 600_000);

afterAll(async () => {
  await h?.stop();
  console.log(`real-nvidia-packages: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, 120_000);

const inNode = async (...argv: string[]): Promise<string> => (await h.node(NODE).exec(argv)).trim();
const onNode = (path: string): string => join(h.node(NODE).rootDir, path);
type Jobs = Awaited<ReturnType<typeof recordStageJobs>>;
const jobOf = (jobs: Jobs, skyhook: string, stage: string) =>
  [...jobs.jobs.values()].find((j) => j.node === NODE && j.skyhook === skyhook && j.stage === stage);
/** True once `stage` of `skyhook` succeeded on the node (so a `complete` status is the new one). */
const ran = (jobs: Jobs, skyhook: string, stage: string): boolean => jobOf(jobs, skyhook, stage)?.succeeded === true;
/** The agent's log files of `step` on the node (stdout `.log`, stderr `.log.err`), all runs. */
const stepLogs = (dir: string, step: string): string =>
  readdirSync(onNode(dir))
    .filter((name) => name.startsWith(`${step}-`))
    .sort()
    .map((name) => readFileSync(join(onNode(dir), name), 'utf8'))
    .join('\n');
/** Deletes a Skyhook left erroring on purpose, so it holds no later one back on the node. */
async function deleteSkyhook(name: string): Promise<void> {
  await kubectlOk(h, ['delete', 'skyhook', name, '--wait=false']);
  await waitForSkyhookGone(h, name, 120_000);
}

describe("NVIDIA's shellscript package on a real systemd node", () => {
  it("shellscript 1.1.1 runs the README demo: apply then config write the node's file", async () => {
    const demo = readFileSync(README_DEMO, 'utf8');
    expect(demo).toContain('version: 1.1.0');
    const jobs = await recordStageJobs(h);
    await kubectlOk(h, ['apply', '-f', '-'], demo.replace('version: 1.1.0', 'version: 1.1.1'));
    await waitForSkyhook(h, 'demo', (s) => s.status?.status === 'complete', 240_000);
    await jobs.stop();
    expect(jobs.stagesByNode('demo')[NODE]).toEqual(['apply', 'config']);
    expect(readFileSync(onNode('skyhook-hello-world'), 'utf8')).toBe('hello world\na config is run\n');
    const logs = Object.values(await stageLogs(h, 'demo', NODE)).join('\n');
    expect(logs).toMatch(/SUCEEDED: shellscript_run\.sh apply/);
    // NVIDIA's 1.1.1 image, not the project's stand-in: NVIDIA's own step script is the one on the node.
    const nvidiaScript = readFileSync(
      resolve(REPO_ROOT, UPSTREAM_SHELLSCRIPT, 'skyhook_dir/shellscript_run.sh'),
      'utf8',
    );
    expect(nvidiaScript).not.toBe(
      readFileSync(resolve(REPO_ROOT, 'packages/shellscript/skyhook_dir/shellscript_run.sh'), 'utf8'),
    );
    expect(await inNode('sh', '-c', 'cat /var/lib/skyhook/demo/tuning-1.1.1-*/skyhook_dir/shellscript_run.sh')).toBe(
      nvidiaScript.trim(),
    );
  }, 300_000);
});

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
    await waitForSkyhook(
      h,
      'tuning',
      (s) => s.status?.status === 'complete' && ran(jobs, 'tuning', 'post-interrupt'),
      300_000,
    );
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
    await waitForSkyhook(
      h,
      'tuning',
      (s) => s.status?.status === 'complete' && ran(jobs, 'tuning', 'uninstall'),
      300_000,
    );
    await jobs.stop();
    expect(jobs.stagesByNode('tuning')[NODE]).toContain('uninstall');
    for (const dropIn of Object.values(DROP_INS)) expect(existsSync(onNode(dropIn))).toBe(false);
  }, 420_000);
});

describe("NVIDIA's tuned packages on a real systemd node", () => {
  it('tuned: installed through the node apt, the configMap profile active and applied, every check passing', async () => {
    const jobs = await recordStageJobs(h);
    await createGroupSkyhook(h, 'tuned', GROUP, {
      packages: {
        tuned: {
          version: '1.2.0',
          image: 'ghcr.io/nvidia/skyhook-packages/tuned',
          interrupt: { type: 'service', services: ['tuned'] },
          configMap: {
            tuned_profile: 'sandbox-net',
            'sandbox-net': '[main]\nsummary=network settings of a sandbox node\n\n[sysctl]\nnet.core.somaxconn=3000\n',
          },
        },
      },
    });
    await waitForSkyhook(h, 'tuned', (s) => s.status?.status === 'complete', 480_000);
    await jobs.stop();
    expect(jobs.stagesByNode('tuned')[NODE]).toEqual(['apply', 'config', 'interrupt', 'post-interrupt']);
    expect([...jobs.jobs.values()].every((j) => j.succeeded && !j.failed)).toBe(true);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format field, not a template literal
    expect(await inNode('dpkg-query', '-W', '-f', '${Status}', 'tuned')).toBe('install ok installed');
    expect(await inNode('systemctl', 'is-active', 'tuned')).toBe('active');
    expect(await inNode('tuned-adm', 'active')).toBe('Current active profile: sandbox-net');
    expect(await inNode('sysctl', '-n', 'net.core.somaxconn')).toBe('3000');
  }, 600_000);

  it('nvidia-tuned: profile active after the reboot; post-interrupt-check checks it and fails only at tuned-adm verify', async () => {
    const jobs = await recordStageJobs(h);
    const bootsBefore = h.node(NODE).boots.length;
    await createGroupSkyhook(h, 'nvidia', GROUP, {
      packages: {
        'nvidia-tuned': {
          version: '0.2.3',
          image: 'ghcr.io/nvidia/skyhook-packages/nvidia-tuned',
          interrupt: { type: 'reboot' },
          // What users set for profiles that need a reboot: config-check tolerates verify failing before it.
          env: [{ name: 'INTERRUPT', value: 'true' }],
          configMap: { accelerator: 'h100', intent: 'inference' },
        },
      },
    });
    await waitForSkyhook(h, 'nvidia', () => jobOf(jobs, 'nvidia', 'post-interrupt')?.failed === true, 480_000);
    await jobs.stop();
    for (const stage of ['apply', 'config', 'interrupt']) expect(jobOf(jobs, 'nvidia', stage)?.succeeded).toBe(true);
    expect(h.node(NODE).boots.length).toBe(bootsBefore + 1);
    expect(await inNode('tuned-adm', 'active')).toBe('Current active profile: nvidia-h100-inference');

    // The file the config stage wrote into configmaps/ reached post-interrupt-check.
    const copies = onNode('var/lib/skyhook/nvidia');
    const copyDir = readdirSync(copies).find((name) => name.startsWith('nvidia-tuned-0.2.3-'));
    expect(readFileSync(join(copies, copyDir!, 'configmaps/tuned_profile'), 'utf8').trim()).toBe(
      'nvidia-h100-inference',
    );
    expect(existsSync(join(copies, copyDir!, 'profiles/os/debian/12/nvidia-h100-inference/tuned.conf'))).toBe(true);

    const check = stepLogs('var/log/skyhook/nvidia/nvidia_tuned/0.2.3', 'post_interrupt_tuned_check.sh');
    console.log(`nvidia-tuned post-interrupt-check (the end):\n${check.split('\n').slice(-25).join('\n')}`);
    expect(check).not.toMatch(/tuned_profile file missing/);
    expect(check).not.toMatch(/is not active|not found in tuned-adm list/);
    expect(check).toMatch(/ERROR: tuned-adm verify failed/);
    await deleteSkyhook('nvidia');
  }, 600_000);
});

describe("NVIDIA's kdump package on a real systemd node", () => {
  it('kdump: apply installs kdump-tools through the node apt; the crash kernel is what this machine cannot give', async () => {
    const jobs = await recordStageJobs(h);
    await createGroupSkyhook(h, 'kdump', GROUP, {
      packages: {
        kdump: {
          version: '1.1.0',
          image: 'ghcr.io/nvidia/skyhook-packages/kdump',
          interrupt: { type: 'reboot' },
          configMap: { crashkernel: '256M' },
        },
      },
    });
    await waitForSkyhook(
      h,
      'kdump',
      (s) => s.status?.status === 'complete' || [...jobs.jobs.values()].some((j) => j.skyhook === 'kdump' && j.failed),
      480_000,
    );
    await jobs.stop();
    const failed = [...jobs.jobs.values()].filter((j) => j.skyhook === 'kdump' && j.failed).map((j) => j.stage);
    console.log(`kdump stages: ${JSON.stringify(jobs.stagesByNode('kdump'))}; failed: ${failed.join(', ') || 'none'}`);
    // apply: kdump-tools installed through the node's apt, its unit enabled and active; the unit itself
    // reports that this kernel (the machine's, shared) cannot load a crash kernel.
    expect(jobOf(jobs, 'kdump', 'apply')?.succeeded).toBe(true);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format field, not a template literal
    expect(await inNode('dpkg-query', '-W', '-f', '${Status}', 'kdump-tools')).toBe('install ok installed');
    expect(await inNode('systemctl', 'is-enabled', 'kdump-tools')).toBe('enabled');
    expect(await inNode('journalctl', '-u', 'kdump-tools', '--no-pager', '-o', 'cat')).toMatch(
      /kdump is not supported by this kernel/,
    );
    // config: the crashkernel= argument goes to GRUB, which the node does not have.
    expect(failed).toEqual(['config']);
    const log = stepLogs('var/log/skyhook/kdump/kdump/1.0.0', 'configure_kdump.sh');
    console.log(`configure_kdump.sh (the end):\n${log.split('\n').slice(-12).join('\n')}`);
    expect(log).toMatch(
      /can't read \/etc\/default\/grub: No such file or directory|could not detect grub update command/,
    );
    await deleteSkyhook('kdump');
  }, 600_000);
});
