/**
 * The sandbox never leaves a process behind: not when a component fails during start, not when
 * `skyhook cluster` gets Ctrl-C, and not when a parent without its own handlers gets SIGTERM.
 * Also: `npm run cluster:build` says what is missing when it cannot build.
 */
import { describe, expect, it } from '@jest/globals';
import { spawn, execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BINARY_NAMES, findBinaries } from '../../src/sandbox/binaries.js';
import { startControlPlane } from '../../src/sandbox/control-plane.js';
import { isAlive, waitUntilGone } from '../../src/sandbox/processes.js';

const repo = resolve(import.meta.dirname, '../..');
const node = process.execPath;

function recordedPids(runDir: string): number[] {
  return readFileSync(join(runDir, 'pids'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => Number(line.split(' ')[0]));
}

/** Resolves once `pattern` appears in the child's combined output, with the match. */
function waitForOutput(child: ReturnType<typeof spawn>, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((resolveMatch, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${seen}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      const match = seen.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolveMatch(match);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
  });
}

function exitOf(child: ReturnType<typeof spawn>): Promise<number | string> {
  return new Promise((resolveExit) => child.on('exit', (code, signal) => resolveExit(code ?? signal ?? -1)));
}

describe('sandbox process hygiene', () => {
  it('stops the components it started when a later one fails, and names the logs', async () => {
    const real = findBinaries();
    const assets = mkdtempSync(join(tmpdir(), 'broken-assets-'));
    for (const name of BINARY_NAMES) {
      if (name === 'kube-apiserver') {
        writeFileSync(join(assets, name), '#!/bin/sh\necho "simulated apiserver crash" >&2\nexit 3\n');
        chmodSync(join(assets, name), 0o755);
      } else {
        symlinkSync(real[name], join(assets, name));
      }
    }
    const baseDir = mkdtempSync(join(tmpdir(), 'sandbox-base-'));
    await expect(startControlPlane({ nodes: 0, baseDir, assetsDir: assets })).rejects.toThrow(
      /kube-apiserver exited \(3\).*component logs are kept in/s,
    );
    const [runDir] = readdirSync(baseDir).map((d) => join(baseDir, d));
    expect(readFileSync(join(runDir!, 'logs', 'kube-apiserver.log'), 'utf8')).toContain('simulated apiserver crash');
    const pids = recordedPids(runDir!);
    expect(pids.length).toBe(2); // etcd, then the failing apiserver
    expect(await waitUntilGone(pids)).toEqual([]);
  }, 60_000);

  it('`skyhook cluster` prints the KUBECONFIG line and stops everything on Ctrl-C', async () => {
    const child = spawn(node, [join(repo, 'bin/skyhook.js'), 'cluster', '--nodes', '1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exit = exitOf(child);
    try {
      // stdout and stderr interleave freely: wait until both lines have been seen.
      const [, kubeconfig] = await waitForOutput(
        child,
        /export KUBECONFIG=(\S+)\n(?=[\s\S]*press Ctrl-C)|press Ctrl-C[\s\S]*export KUBECONFIG=(\S+)\n/,
        60_000,
      ).then((m) => [m[0], m[1] ?? m[2]]);
      const runDir = resolve(kubeconfig!, '..');
      const pids = recordedPids(runDir);
      expect(pids.length).toBe(5);
      const dead = readFileSync(join(runDir, 'pids'), 'utf8')
        .trim()
        .split('\n')
        .filter((line) => !isAlive(Number(line.split(' ')[0])));
      const logTail = (name: string): string =>
        readFileSync(join(runDir, 'logs', `${name}.log`), 'utf8')
          .split('\n')
          .slice(-15)
          .join('\n');
      expect(dead.map((line) => `${line}:\n${logTail(line.split(' ')[1] ?? '')}`)).toEqual([]);
      child.kill('SIGINT');
      expect(await exit).toBe(0);
      expect(await waitUntilGone(pids)).toEqual([]);
      expect(existsSync(runDir)).toBe(false);
    } finally {
      child.kill('SIGINT'); // a failed expectation must not leave a cluster running
    }
  }, 90_000);

  it('kills the control plane when a parent without handlers of its own gets SIGTERM', async () => {
    const script = `
      const { startControlPlane } = await import(${JSON.stringify(join(repo, 'dist/sandbox/control-plane.js'))});
      const cp = await startControlPlane({ nodes: 1 });
      console.log('PIDS ' + JSON.stringify(cp.pids));
      setInterval(() => {}, 1000);`;
    const child = spawn(node, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exit = exitOf(child);
    try {
      const [, pidsJson] = await waitForOutput(child, /PIDS (\[[^\]]*\])/, 60_000);
      const pids = JSON.parse(pidsJson!) as number[];
      expect(pids.length).toBe(5);
      child.kill('SIGTERM');
      expect(await exit).toBe(143);
      expect(await waitUntilGone(pids)).toEqual([]);
    } finally {
      child.kill('SIGTERM');
    }
  }, 90_000);
});

describe('npm run cluster:build', () => {
  const build = (env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> =>
    new Promise((resolveRun) => {
      execFile(
        'bash',
        [join(repo, 'tools/build-control-plane.sh')],
        { env: { ...env, KUBEBUILDER_ASSETS: '' } },
        (error, stdout, stderr) => {
          resolveRun({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
        },
      );
    });
  const emptyCache = (): string => mkdtempSync(join(tmpdir(), 'no-bins-'));

  it('without Go, says so and how to supply binaries through KUBEBUILDER_ASSETS', async () => {
    const { code, output } = await build({
      PATH: '/usr/bin:/bin',
      HOME: process.env.HOME,
      SKYHOOK_CACHE_DIR: emptyCache(),
    });
    expect(code).toBe(1);
    expect(output).toMatch(/'go' command was not found/);
    expect(output).toMatch(/export KUBEBUILDER_ASSETS=/);
  });

  it('without the module proxy, says it could not download and how to supply binaries', async () => {
    const { code, output } = await build({
      ...process.env,
      GOPROXY: 'off',
      GOFLAGS: '-mod=mod',
      GOMODCACHE: emptyCache(),
      SKYHOOK_CACHE_DIR: emptyCache(),
    });
    expect(code).toBe(1);
    expect(output).toMatch(/could not download k8s\.io\/kubernetes/);
    expect(output).toMatch(/export KUBEBUILDER_ASSETS=/);
  });
});
