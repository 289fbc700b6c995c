/**
 * The progress view as a person sees it: `skyhook sandbox` under a pseudo-terminal (util-linux
 * `script`) redraws one line per demo node, and each ends in `complete`.
 */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { waitUntilGone } from '../../src/sandbox/processes.js';

const repo = resolve(import.meta.dirname, '../..');

/** The terminal's escape character: the patterns are built from it, as a raw one in a regex reads as a typo. */
const ESC = '\u001b';
/** The tokens the progress view writes: cursor up (`ESC[nA`), erase line (`ESC[K`, `ESC[2K`), newline. */
const REDRAW_TOKEN = new RegExp(`(${ESC}\\[\\d*[AK]|${ESC}\\[2K|\\n)`);
const CURSOR_UP = new RegExp(`^${ESC}\\[(\\d*)A$`);

/** The screen after replaying the redraws: cursor-up moves back over the block, erase-line clears. */
function lastFrame(output: string): string[] {
  const screen: string[] = [];
  let row = 0;
  for (const token of output.replace(/\r/g, '').split(REDRAW_TOKEN)) {
    const up = CURSOR_UP.exec(token);
    if (up) row = Math.max(0, row - Number(up[1] || 1));
    else if (token === '\x1b[2K') screen[row] = '';
    else if (token === '\n') row++;
    else if (token) screen[row] = (screen[row] ?? '') + token;
  }
  return screen;
}

describe('sandbox progress view in a terminal', () => {
  it('shows a line per demo node that ends in complete', async () => {
    const command = `${process.execPath} ${resolve(repo, 'bin/skyhook.js')} sandbox --pod-duration 200ms`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: repo,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    let pids: number[] = [];
    try {
      await new Promise<void>((resolveDone, reject) => {
        const timer = setTimeout(() => reject(new Error(`no completion within 120 s; output:\n${output}`)), 120_000);
        child.stdout?.on('data', () => {
          if (/complete on every selected node/.test(output)) {
            clearTimeout(timer);
            resolveDone();
          }
        });
      });
      const runDir = /operator running \(log: (\S+)\/logs\/operator\.log\)/.exec(output)?.[1];
      pids = readFileSync(join(runDir ?? '', 'pids'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => Number(l.split(' ')[0]));
      expect(output).toMatch(new RegExp(`${ESC}\\[\\d+A`)); // it redraws in place
      const frame = lastFrame(output);
      const nodeRows = frame.filter((line) => /^\s+node-\d/.test(line));
      expect(nodeRows.map((line) => line.trim().split(/\s+/)[0]).sort()).toEqual(['node-0', 'node-1', 'node-2']);
      for (const line of nodeRows)
        expect(line).toMatch(/^\s+node-\d\s+complete\s+\[#{20}\]\s+100%\s+motd@1\.1\.0 config\/complete$/);
    } finally {
      process.kill(-child.pid!, 'SIGINT');
      await exited;
    }
    expect(pids.length).toBe(5);
    expect(await waitUntilGone([child.pid!, ...pids])).toEqual([]);
  }, 180_000);
});
