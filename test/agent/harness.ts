/**
 * Helpers for tests that run the real agent CLI as a process against a fake host root in a temp
 * dir: compile the agent, build a tiny root filesystem (busybox-static + bash-static), place a
 * package where the operator would, and run `skyhook agent …` chrooted into that root.
 * Nothing here touches the real host: every path the agent writes is under the temp root, and the
 * interrupt commands default to a command that does not exist in it.
 */
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
export const SHELLSCRIPT_PACKAGE = join(REPO, 'packages/shellscript');
export const FIXTURES = join(REPO, 'test/agent/fixtures');

/** The operator's layout for a Skyhook named `demo`. */
export const STATE_DIR = '/var/lib/skyhook/demo';
export const LOG_DIR = '/var/log/skyhook/demo';

/**
 * Compiles src/agent into node_modules/.cache (so its imports resolve to the repo's packages) and
 * returns a launcher that calls runAgentCli, the function `skyhook agent` dispatches to.
 */
export function buildAgentCli(): { launcher: string; cleanup: () => void } {
  // A fresh clone after `npm ci` has no node_modules/.cache yet.
  mkdirSync(join(REPO, 'node_modules/.cache'), { recursive: true });
  const outDir = mkdtempSync(join(REPO, 'node_modules/.cache/agent-cli-'));
  const tsc = join(REPO, 'node_modules/.bin/tsc');
  execFileSync(
    tsc,
    [
      '--ignoreConfig',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2023',
      '--skipLibCheck',
      '--types',
      'node',
      '--rootDir',
      join(REPO, 'src'),
      '--outDir',
      outDir,
      join(REPO, 'src/agent/cli.ts'),
    ],
    { stdio: 'pipe' },
  );
  const launcher = join(outDir, 'main.mjs');
  writeFileSync(
    launcher,
    "import { runAgentCli } from './agent/cli.js';\nprocess.exitCode = await runAgentCli(process.argv.slice(2));\n",
  );
  return { launcher, cleanup: () => rmSync(outDir, { recursive: true, force: true }) };
}

/** Applets the test root gets. Deliberately no reboot/poweroff/halt: a chroot does not isolate those. */
const APPLETS = [
  'sh',
  'cat',
  'grep',
  'sleep',
  'echo',
  'chmod',
  'mkdir',
  'ls',
  'rm',
  'cp',
  'env',
  'pwd',
  'touch',
  'kill',
  'printf',
  'test',
  '[',
  'cut',
  'wc',
  'sort',
  'diff',
  'tr',
  'mv',
  'true',
  'false',
  'date',
  'dirname',
  'basename',
];

/** A minimal root filesystem under a new temp dir; Debian's busybox-static and bash-static provide it. */
export function makeRootfs(): string {
  for (const binary of ['/bin/busybox', '/bin/bash-static']) {
    if (!existsSync(binary))
      throw new Error(
        `${binary} is missing: run \`npm run setup:test\` (installs Debian's busybox-static and bash-static as root, or prints the command)`,
      );
  }
  const root = mkdtempSync(join(tmpdir(), 'skyhook-agent-root-'));
  mkdirSync(join(root, 'bin'), { recursive: true });
  mkdirSync(join(root, 'etc'), { recursive: true });
  mkdirSync(join(root, 'tmp'), { recursive: true });
  cpSync('/bin/busybox', join(root, 'bin/busybox'));
  cpSync('/bin/bash-static', join(root, 'bin/bash'));
  for (const applet of APPLETS) symlinkSync('busybox', join(root, 'bin', applet));
  return root;
}

/** Copies a package onto the fake host the way the operator's copy container does, configMap included. */
export function placePackage(
  root: string,
  copyDir: string,
  packageDir: string,
  configMap: Record<string, string> = {},
): string {
  const onHost = join(root, copyDir);
  mkdirSync(join(onHost, 'configmaps'), { recursive: true });
  cpSync(packageDir, onHost, { recursive: true });
  for (const [key, value] of Object.entries(configMap)) writeFileSync(join(onHost, 'configmaps', key), value);
  return onHost;
}

/** Writes an executable script into the fake root (stubs for interrupt commands, probe steps). */
export function writeScript(path: string, body: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, body);
  chmodSync(path, 0o755);
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function agentEnv(extra: Record<string, string> = {}): Record<string, string> {
  const missing = '/skyhook-test-no-such-command';
  return {
    PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
    SKYHOOK_RESOURCE_ID: 'demo-0f0e-1_tuning_1.1.0',
    SKYHOOK_ROOT_DIR: STATE_DIR,
    SKYHOOK_LOG_DIR: LOG_DIR,
    COPY_RESOLV: 'false',
    SKYHOOK_AGENT_STEP_DELAY_MS: '0',
    SKYHOOK_AGENT_REBOOT_COMMAND: missing,
    SKYHOOK_AGENT_DAEMON_RELOAD_COMMAND: missing,
    SKYHOOK_AGENT_SERVICE_RESTART_COMMAND: missing,
    SKYHOOK_AGENT_RESTART_ALL_SERVICES_COMMAND: missing,
    ...extra,
  };
}

/** Runs the agent CLI as its own process; `onSpawn` gets the pid (to send signals). */
export function runAgentProcess(
  launcher: string,
  args: string[],
  env: Record<string, string>,
  onSpawn?: (pid: number) => void,
): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [launcher, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('spawn', () => child.pid !== undefined && onSpawn?.(child.pid));
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

export interface StepSpec {
  path: string;
  arguments?: string[];
  returncodes?: number[];
  idempotence?: boolean;
  upgrade_step?: boolean;
  env?: Record<string, string>;
}

/** A config.json in upstream's shape; every step gets the published packages' defaults. */
export function packageConfig(
  modes: Record<string, StepSpec[]>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    schema_version: 'v1',
    package_name: 'probe',
    package_version: '2.0.0',
    expected_config_files: [],
    modes: Object.fromEntries(
      Object.entries(modes).map(([mode, steps]) => [
        mode,
        steps.map((s) => ({
          name: mode,
          arguments: [],
          returncodes: [0],
          on_host: true,
          env: {},
          idempotence: true,
          upgrade_step: false,
          ...s,
        })),
      ]),
    ),
    ...extra,
  };
}

/** Writes a package directory: config.json plus `skyhook_dir/<name>` scripts (mode 0755 unless given). */
export function writePackage(
  dir: string,
  config: unknown,
  scripts: Record<string, string | { body: string; mode: number }>,
): string {
  mkdirSync(join(dir, 'skyhook_dir'), { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  for (const [name, script] of Object.entries(scripts)) {
    const { body, mode } = typeof script === 'string' ? { body: script, mode: 0o755 } : script;
    mkdirSync(dirname(join(dir, 'skyhook_dir', name)), { recursive: true });
    writeFileSync(join(dir, 'skyhook_dir', name), body);
    chmodSync(join(dir, 'skyhook_dir', name), mode);
  }
  return dir;
}
