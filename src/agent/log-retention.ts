/** Which old step logs to delete: only the 5 newest `<step>-<timestamp>.log` of a step are kept. */
import { compareText } from '../util/compare.js';

export const LOGS_KEPT_PER_STEP = 5;

export interface LogFileEntry {
  name: string;
  mtimeMs: number;
}

/**
 * `entries` are the files of the step's log directory, `stepBaseName` the step script's file name.
 * The `.log.err` companions are not counted and not deleted, as upstream does.
 */
export function logsToReap(
  entries: readonly LogFileEntry[],
  stepBaseName: string,
  keep = LOGS_KEPT_PER_STEP,
): string[] {
  const prefix = `${stepBaseName}-`;
  const timestamped = /^\d{4}-\d{2}-\d{2}-\d{6}\.log$/;
  return entries
    .filter((e) => e.name.startsWith(prefix) && timestamped.test(e.name.slice(prefix.length)))
    .sort((a, b) => b.mtimeMs - a.mtimeMs || compareText(b.name, a.name))
    .slice(keep)
    .map((e) => e.name);
}
