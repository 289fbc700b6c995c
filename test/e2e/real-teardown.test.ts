/**
 * Nothing a real node creates outlives the sandbox: `skyhook cluster` and `skyhook sandbox` (what
 * `npm start` runs) with a real node are stopped at random moments — during the node's boot, during
 * a stage, during a reboot — by Ctrl-C or SIGTERM, and made to fail their start (a kubelet that
 * exits); each time no node process, network namespace, veth, cgroup, slot claim, mount, fleet
 * directory or host iptables rule is left. The random delays are printed so a failure can be replayed.
 * Also: the real node of `skyhook sandbox` pulls the demo's package image through the sandbox
 * registry (not imported), and nothing of it is left either.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BINARY_NAMES, findBinaries } from '../../src/sandbox/binaries.js';
import { realNodeLeftovers } from '../../src/sandbox/real-node/leftovers.js';
import { acquireSerialLock, REPO_ROOT } from './real-harness.js';

const DEMO_IMAGE = 'ghcr.io/nvidia/skyhook-packages/shellscript:1.1.0';

const CLI = join(REPO_ROOT, 'bin/skyhook.js');
const REBOOT_FIXTURE = join(REPO_ROOT, 'test/e2e/fixtures/real-reboot.yaml');
let release: () => void;
let iptablesBefore = '';
const work = mkdtempSync(join(tmpdir(), 'real-teardown-'));

/** The host's iptables rules without counters and comments, to compare before and after. */
const iptablesRules = (): string =>
  execFileSync('iptables-save', { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l && !l.startsWith('#') && !l.startsWith(':'))
    .join('\n');

beforeAll(async () => {
  release = await acquireSerialLock();
  iptablesBefore = iptablesRules();
}, 600_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  release?.();
});

/** Every CLI this file started; one a failed test left running is stopped before the next test. */
const started = new Set<Run>();

afterEach(async () => {
  for (const r of started) {
    if (r.child.exitCode === null && r.child.signalCode === null) {
      r.child.kill('SIGINT');
      const timer = setTimeout(() => r.child.kill('SIGKILL'), 90_000);
      await r.exited;
      clearTimeout(timer);
    }
  }
  started.clear();
}, 120_000);

interface Run {
  child: ChildProcess;
  output: () => string;
  /** Resolves once `pattern` appears in stdout or stderr. */
  when(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<number | string>;
}

function run(args: string[], env: NodeJS.ProcessEnv = process.env): Run {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    text += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | string>((resolveExit) =>
    child.on('exit', (code, signal) => resolveExit(code ?? signal ?? '')),
  );
  const handle: Run = {
    child,
    exited,
    output: () => text,
    when: (pattern, timeoutMs = 240_000) =>
      new Promise((resolveMatch, reject) => {
        const check = (): void => {
          const match = pattern.exec(text);
          if (!match) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolveMatch(match);
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${text}`));
        }, timeoutMs);
        listeners.add(check);
        void exited.then(() => {
          if (listeners.has(check)) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`exited before ${pattern}; output:\n${text}`));
          }
        });
        check();
      }),
  };
  started.add(handle);
  return handle;
}

const randomMs = (maxMs: number): number => Math.floor(Math.random() * maxMs);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function stopAndCheck(r: Run, signal: NodeJS.Signals, what: string): Promise<void> {
  r.child.kill(signal);
  const timer = setTimeout(() => r.child.kill('SIGKILL'), 90_000);
  const exit = await r.exited;
  clearTimeout(timer);
  console.log(`${what}: exited with ${exit} after ${signal}`);
  expect(realNodeLeftovers()).toEqual([]);
  expect(iptablesRules()).toBe(iptablesBefore);
}

describe('stopping a sandbox with a real node at random moments leaves nothing behind', () => {
  it("Ctrl-C during the node's boot", async () => {
    const r = run(['cluster', '--nodes', '1', '--real-nodes', '1']);
    await r.when(/real nodes: making sure the images are built/);
    const delay = randomMs(6000); // images checked, golden tree, copy, boot: about 6 s in all

    console.log(`boot: SIGINT ${delay} ms into the real node's start`);
    await sleep(delay);
    await stopAndCheck(r, 'SIGINT', 'during boot');
  }, 300_000);

  it('SIGTERM during a stage', async () => {
    const r = run(['sandbox', '--nodes', '1', '--demo-nodes', '0', '--real-nodes', '1']);
    await r.when(/real-0\s+in_progress/);
    const delay = randomMs(3000);
    console.log(`stage: SIGTERM ${delay} ms after the real node's first stage started`);
    await sleep(delay);
    await stopAndCheck(r, 'SIGTERM', 'during a stage');
  }, 300_000);

  it('Ctrl-C during a reboot', async () => {
    const r = run(['sandbox', '--nodes', '1', '--demo-nodes', '0', '--real-nodes', '1', '-f', REBOOT_FIXTURE]);
    const [, rootDir] = await r.when(/real node real-0 \([^)]*\): root filesystem (\S+)/);
    const bootIdFile = join(dirname(rootDir!), 'boot_id');
    const first = readFileSync(bootIdFile, 'utf8');
    const deadline = Date.now() + 240_000;
    while (existsSync(bootIdFile) && readFileSync(bootIdFile, 'utf8') === first && Date.now() < deadline)
      await sleep(100);
    // The moment under test is a reboot in progress: a new boot ID, on a node that is still there.
    if (!existsSync(bootIdFile) || readFileSync(bootIdFile, 'utf8') === first)
      throw new Error(
        `the real node never began rebooting (boot ID ${existsSync(bootIdFile) ? 'unchanged' : 'file gone'}); output:\n${r.output()}`,
      );
    const delay = randomMs(2000);
    console.log(`reboot: SIGINT ${delay} ms after the node began rebooting`);
    await sleep(delay);
    await stopAndCheck(r, 'SIGINT', 'during a reboot');
  }, 360_000);

  it('a start that fails (the kubelet exits) cleans up and says where the logs are', async () => {
    const assets = join(work, 'assets');
    execFileSync('mkdir', ['-p', assets]);
    const binaries = findBinaries();
    for (const name of BINARY_NAMES) symlinkSync(binaries[name], join(assets, name));
    writeFileSync(join(assets, 'kubelet'), '#!/bin/sh\necho "kubelet stand-in: failing on purpose" >&2\nexit 1\n');
    chmodSync(join(assets, 'kubelet'), 0o755);
    const r = run(['cluster', '--nodes', '1', '--real-nodes', '1'], { ...process.env, KUBEBUILDER_ASSETS: assets });
    const exit = await r.exited;
    expect(exit).not.toBe(0);
    expect(r.output()).toMatch(/real node real-0 went down while booting/);
    expect(realNodeLeftovers()).toEqual([]);
    expect(iptablesRules()).toBe(iptablesBefore);
  }, 300_000);
});

function processesWithArgument(argument: string): string[] {
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(argument);
      } catch {
        return false; // exited while we looked
      }
    });
}

describe('`npm start` with a real node', () => {
  it("pulls the demo's package image through the sandbox registry, imports the agent image, and leaves nothing behind", async () => {
    const r = run(['sandbox', '--nodes', '1', '--demo-nodes', '0', '--real-nodes', '1']);
    const [, registryLog] = await r.when(/sandbox registry \S+ \(the real nodes' mirror[^)]*\): log (\S+)/);
    const [, kubeconfig] = await r.when(/export KUBECONFIG=(\S+)/, 300_000);
    const events = JSON.parse(
      execFileSync(
        findBinaries().kubectl,
        ['--kubeconfig', kubeconfig!, 'get', 'events', '-A', '--field-selector', 'reason=Pulled', '-o', 'json'],
        { encoding: 'utf8' },
      ),
    ) as { items: Array<{ message?: string }> };
    const pulled = events.items.map((e) => e.message ?? '');
    // The kubelet pulled it (it was not on the node) and containerd asked the registry, as ghcr.io's mirror.
    expect(pulled.some((m) => m.startsWith(`Successfully pulled image "${DEMO_IMAGE}"`))).toBe(true);
    const served = readFileSync(registryLog!, 'utf8')
      .split('\n')
      .filter((line) => line.includes('/v2/nvidia/skyhook-packages/shellscript/manifests/1.1.0'));
    expect(served.some((line) => line.includes('ns=ghcr.io') && /response completed/.test(line))).toBe(true);
    // The agent image stays imported from its archive: the registry does not hold it.
    expect(pulled.some((m) => m.includes('"ghcr.io/skyhook-ts/skyhook:0.1.0" already present on machine'))).toBe(true);
    expect(readFileSync(registryLog!, 'utf8')).not.toContain('/v2/skyhook-ts/skyhook/manifests/');
    await stopAndCheck(r, 'SIGINT', 'after the demo completed');
    // The registry went with the sandbox: no process serves its configuration any more.
    const config = join(dirname(dirname(registryLog!)), 'registry', 'config.yml');
    expect(processesWithArgument(config)).toEqual([]);
  }, 420_000);
});
