/**
 * `npm start` on a fresh clone: the sandbox rolls the demo Skyhook out on the three labelled nodes,
 * says so, hands over a kubeconfig, and leaves nothing running after Ctrl-C.
 */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { waitUntilGone } from '../../src/sandbox/processes.js';

const repo = resolve(import.meta.dirname, '../..');

describe('npm start', () => {
  it('completes the demo on the labelled nodes, prints the kubeconfig, and stops cleanly on Ctrl-C', async () => {
    // Its own process group, so the SIGINT below reaches npm, the shell and node as Ctrl-C would.
    const child = spawn('npm', ['start', '--', '--pod-duration', '200ms'], {
      cwd: repo,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const seen = (pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> =>
      new Promise((resolveMatch, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${output}`)),
          timeoutMs,
        );
        const check = (): void => {
          const match = output.match(pattern);
          if (match) {
            clearTimeout(timer);
            resolveMatch(match);
          }
        };
        child.stdout?.on('data', (c: Buffer) => {
          output += c.toString();
          check();
        });
        child.stderr?.on('data', (c: Buffer) => {
          output += c.toString();
          check();
        });
        check();
      });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await seen(/demo complete on every selected node in [\d.]+ s/, 180_000);
      const [, kubeconfig] = await seen(/export KUBECONFIG=(\S+)/, 10_000);
      expect(output).not.toContain('\u001b['); // no TTY: plain lines, no cursor movement

      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig!);
      const nodes = (await kc.makeApiClient(CoreV1Api).listNode()).items;
      const demoNodes = nodes.filter((n) => n.metadata?.labels?.['skyhook.nvidia.com/test-node'] === 'demo');
      expect(demoNodes.map((n) => n.metadata?.name).sort()).toEqual(['node-0', 'node-1', 'node-2']);
      for (const node of demoNodes) {
        const state = JSON.parse(node.metadata?.annotations?.['skyhook.nvidia.com/nodeState_demo'] ?? '{}') as Record<
          string,
          { stage: string; state: string }
        >;
        expect(state['motd|1.1.0']).toMatchObject({ stage: 'config', state: 'complete' });
      }
      for (const node of nodes.filter((n) => !demoNodes.includes(n))) {
        expect(node.metadata?.annotations?.['skyhook.nvidia.com/nodeState_demo']).toBeUndefined();
      }

      const pids = readFileSync(join(resolve(kubeconfig!, '..'), 'pids'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => Number(l.split(' ')[0]));
      process.kill(-child.pid!, 'SIGINT');
      await exited;
      expect(await waitUntilGone([...pids, child.pid!])).toEqual([]);
    } finally {
      try {
        process.kill(-child.pid!, 'SIGINT'); // never leave a sandbox behind a failed expectation
      } catch {
        // Already gone.
      }
    }
  }, 240_000);
});
