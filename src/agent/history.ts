/**
 * The per-package history file `<state dir>/history/<package_name>.json`: which version is
 * installed and when each install or uninstall finished, newest first. Pure; I/O is in host-state.ts.
 */
import { pyJsonDumps, pyUtcIsoformat } from './python-format.js';

export interface HistoryEntry {
  version: string;
  time: string;
}

export interface HistoryData {
  'current-version': string;
  history: HistoryEntry[];
  /** Keys we do not know are kept as they are. */
  [key: string]: unknown;
}

export type HistoryRead = { kind: 'missing' } | { kind: 'corrupt' } | { kind: 'ok'; data: HistoryData };

export const UNINSTALLED = 'uninstalled';

export function parseHistory(text: string | undefined): HistoryRead {
  if (text === undefined) return { kind: 'missing' };
  try {
    const data: unknown = JSON.parse(text);
    // Anything we could not append to is as good as corrupt (upstream would crash on it).
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return { kind: 'corrupt' };
    const record = data as Record<string, unknown>;
    if (!Array.isArray(record['history'])) return { kind: 'corrupt' };
    return {
      kind: 'ok',
      data: {
        ...record,
        'current-version': String(record['current-version'] ?? ''),
        history: record['history'] as HistoryEntry[],
      },
    };
  } catch {
    return { kind: 'corrupt' };
  }
}

/** PREVIOUS_VERSION for upgrade steps: `unknown` when there is no history, `` after a corrupt one. */
export function installedVersion(read: HistoryRead): string {
  if (read.kind === 'missing') return 'unknown';
  if (read.kind === 'corrupt') return '';
  return read.data['current-version'];
}

/** The history after a successful apply-check/upgrade-check (`version`) or uninstall-check (`uninstalled`). */
export function recordVersion(read: HistoryRead, version: string, now: Date): HistoryData {
  const base: HistoryData = read.kind === 'ok' ? read.data : { 'current-version': '', history: [] };
  return { ...base, 'current-version': version, history: [{ version, time: pyUtcIsoformat(now) }, ...base.history] };
}

export function serializeHistory(data: HistoryData): string {
  return pyJsonDumps(data);
}
