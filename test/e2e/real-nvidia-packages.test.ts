/**
 * NVIDIA's shellscript 1.1.1 and kdump 1.1.0 packages (images built by `npm run images` from
 * NVIDIA's files, unchanged) on a real systemd node:
 *   - shellscript 1.1.1 runs the upstream README demo (the demo's SCR unchanged but for the image
 *     tag): apply then config write /skyhook-hello-world into the node's root;
 *   - kdump: apply installs kdump-tools through the node's apt and enables its unit; what fails here
 *     is the crash kernel itself (printed, and asserted exactly): a node sharing the machine's kernel
 *     has no crashkernel= reservation and cannot load a crash kernel.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  createGroupSkyhook,
  DEMO_LABEL,
  GROUP_LABEL,
  kubectlOk,
  recordStageJobs,
  REPO_ROOT,
  stageLogs,
  startRealHarness,
  waitForSkyhook,
  type RealHarness,
} from './real-harness.js';

const NODE = 'real-0';
const GROUP = 'nvidia';
const README_DEMO = resolve(REPO_ROOT, '../shared/examples/skyhook-readme-demo.yaml');
const UPSTREAM_SHELLSCRIPT = '../shared/upstream-packages/at-release-tags/shellscript-1.1.1';
let h: RealHarness;
const started = Date.now();

beforeAll(async () => {
  h = await startRealHarness({
    realNodes: 1,
    realNodeLabels: { ...DEMO_LABEL, [GROUP_LABEL]: GROUP },
    skyhook: { settings: { jobBackoffLimit: 0 } },
  });
  for (const name of ['shellscript', 'kdump']) {
    const image = h.images.nvidiaPackages.find((i) => i.name === name);
    if (!image || image.standIn) throw new Error(`NVIDIA's ${name} image was not built from NVIDIA's files`);
  }
}, 600_000);

afterAll(async () => {
  await h?.stop();
  console.log(`real-nvidia-packages: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, 120_000);

const inNode = async (...argv: string[]): Promise<string> => (await h.node(NODE).exec(argv)).trim();
type Jobs = Awaited<ReturnType<typeof recordStageJobs>>;
/** The agent's log files of `step` on the node (stdout `.log`, stderr `.log.err`), all runs. */
const stepLogs = (dir: string, step: string): string =>
  readdirSync(join(h.node(NODE).rootDir, dir))
    .filter((name) => name.startsWith(`${step}-`))
    .sort()
    .map((name) => readFileSync(join(h.node(NODE).rootDir, dir, name), 'utf8'))
    .join('\n');
const jobOf = (jobs: Jobs, skyhook: string, stage: string) =>
  [...jobs.jobs.values()].find((j) => j.node === NODE && j.skyhook === skyhook && j.stage === stage);

describe("NVIDIA's shellscript and kdump packages on a real systemd node", () => {
  it("shellscript 1.1.1 runs the README demo: apply then config write the node's file", async () => {
    const demo = readFileSync(README_DEMO, 'utf8');
    expect(demo).toContain('version: 1.1.0');
    const jobs = await recordStageJobs(h);
    await kubectlOk(h, ['apply', '-f', '-'], demo.replace('version: 1.1.0', 'version: 1.1.1'));
    await waitForSkyhook(h, 'demo', (s) => s.status?.status === 'complete', 240_000);
    await jobs.stop();
    expect(jobs.stagesByNode('demo')[NODE]).toEqual(['apply', 'config']);
    expect(readFileSync(join(h.node(NODE).rootDir, 'skyhook-hello-world'), 'utf8')).toBe(
      'hello world\na config is run\n',
    );
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
  }, 600_000);
});
