/**
 * Rendering of command results: aligned tables (kubectl style: upper-case headers, two spaces
 * between columns, `wide` adds the columns marked wide), the records as JSON or YAML for tools, or
 * `-o name`: one `resource/name` per line, each once (kubectl's form, for xargs and scripts).
 */
import { stringify } from 'yaml';
import type { OutputFormat } from './options.js';

export interface Column<T> {
  header: string;
  value: (row: T) => string;
  /** Shown with `-o wide` only. */
  wide?: boolean;
}

export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[], wide = false): string {
  const shown = columns.filter((column) => wide || !column.wide);
  const cells = [shown.map((column) => column.header), ...rows.map((row) => shown.map((column) => column.value(row)))];
  const widths = shown.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells
    .map((line) =>
      line
        .map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `records` in the chosen format; `table` and `wide` use `columns`, `name` uses `nameOf` (default: the first column). */
export function render<T>(
  records: readonly T[],
  columns: readonly Column<T>[],
  format: OutputFormat,
  nameOf: (row: T) => string = (row) => columns[0]?.value(row) ?? '',
): string {
  if (format === 'name') return [...new Set(records.map(nameOf))].join('\n');
  if (format === 'json') return JSON.stringify(records, null, 2);
  if (format === 'yaml') return records.length === 0 ? '[]' : stringify(records).trimEnd();
  return renderTable(records, columns, format === 'wide');
}
