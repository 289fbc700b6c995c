/** Reads and writes the agent's state files on the host: START, step flags, check results, history. */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { allCheckedPath, checkResultsPath, historyPath, startFlagPath, type HostLayout } from './host-paths.js';
import { parseHistory, recordVersion, serializeHistory, type HistoryRead } from './history.js';
import { pyBool } from './python-format.js';

export function writeFileMakingDirs(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

export function markStarted(layout: HostLayout): void {
  writeFileMakingDirs(startFlagPath(layout), '');
}

/** One `<path> <True|False>` line per check step, True meaning it failed; no trailing newline. */
export function checkResultsText(results: ReadonlyArray<{ path: string; failed: boolean }>): string {
  return results.map((r) => `${r.path} ${pyBool(r.failed)}`).join('\n');
}

export function writeCheckResults(layout: HostLayout, results: ReadonlyArray<{ path: string; failed: boolean }>): void {
  writeFileMakingDirs(checkResultsPath(layout), checkResultsText(results));
}

export function markAllChecked(layout: HostLayout, mode: string): void {
  writeFileMakingDirs(allCheckedPath(layout, mode), '');
}

/** Reads the history; a corrupt file is moved aside to `<file>.backup` and counts as empty. */
export function readHistory(layout: HostLayout, pkg: string, print: (line: string) => void): HistoryRead {
  const path = historyPath(layout, pkg);
  if (!existsSync(path)) {
    print(`no existing history found for ${pkg}, could be first installation...`);
    return { kind: 'missing' };
  }
  const read = parseHistory(readFileSync(path, 'utf8'));
  if (read.kind === 'corrupt') {
    renameSync(path, `${path}.backup`);
    print(`Failed to load existing history, corrupt history file moved to ${path}.backup...`);
  }
  return read;
}

export function recordHistory(layout: HostLayout, pkg: string, version: string, print: (line: string) => void): void {
  const read = readHistory(layout, pkg, print);
  writeFileMakingDirs(historyPath(layout, pkg), serializeHistory(recordVersion(read, version, new Date())));
}

export function removeFiles(paths: readonly string[]): void {
  for (const path of paths) rmSync(path, { force: true });
}
