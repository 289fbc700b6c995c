/**
 * NVIDIA's tuned 1.2.0 and nvidia-tuned 0.2.3 packages (images built by `npm run images` from
 * NVIDIA's files, unchanged) on a real systemd node. tuned is installed by the package itself through
 * the node's apt, which reaches Debian's archive the way this machine does (the node's apt proxy
 * forwards only to this machine's apt source hosts).
 *   - tuned: a profile from the SCR's configMap (network sysctls only: the only per-node kernel
 *     settings here) is active (`tuned-adm active`), applied, and every check passes;
 *   - nvidia-tuned: its `nvidia-h100-inference` profile is active after the reboot interrupt, and the
 *     post-interrupt-check really checks it: tuned_profile, written by the config stage into the
 *     package's configmaps directory, is still there (the check would only warn without it), the
 *     active-profile check passes, and only `tuned-adm verify` fails: the profile sets global kernel
 *     settings and kernel arguments (vm.swappiness, kernel.sched_*, isolcpus, hugepages), which a
 *     node sharing the machine's kernel cannot change.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createGroupSkyhook,
  GROUP_LABEL,
  recordStageJobs,
  startRealHarness,
  waitForSkyhook,
  type RealHarness,
} from './real-harness.js';

const NODE = 'real-0';
const GROUP = 'tuned';
let h: RealHarness;
const started = Date.now();

beforeAll(async () => {
  h = await startRealHarness({
    realNodes: 1,
    realNodeLabels: { [GROUP_LABEL]: GROUP },
    skyhook: { settings: { jobBackoffLimit: 0 } },
  });
  for (const name of ['tuned', 'nvidia-tuned']) {
    const image = h.images.nvidiaPackages.find((i) => i.name === name);
    if (!image || image.standIn) throw new Error(`NVIDIA's ${name} image was not built from NVIDIA's files`);
  }
}, 600_000);

afterAll(async () => {
  await h?.stop();
  console.log(`real-nvidia-tuned: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, 120_000);

const inNode = async (...argv: string[]): Promise<string> => (await h.node(NODE).exec(argv)).trim();
type Jobs = Awaited<ReturnType<typeof recordStageJobs>>;
const jobOf = (jobs: Jobs, skyhook: string, stage: string) =>
  [...jobs.jobs.values()].find((j) => j.node === NODE && j.skyhook === skyhook && j.stage === stage);
/** The agent's log files of `step` on the node (stdout `.log`, stderr `.log.err`), all runs. */
const stepLogs = (dir: string, step: string): string =>
  readdirSync(join(h.node(NODE).rootDir, dir))
    .filter((name) => name.startsWith(`${step}-`))
    .sort()
    .map((name) => readFileSync(join(h.node(NODE).rootDir, dir, name), 'utf8'))
    .join('\n');

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
    const copies = join(h.node(NODE).rootDir, 'var/lib/skyhook/nvidia');
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
  }, 600_000);
});
