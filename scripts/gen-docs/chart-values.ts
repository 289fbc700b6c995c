/**
 * The values table of chart/README.md, generated from chart/values.yaml: every value with its
 * default and the comment above (or beside) it, so the README and `helm show values` agree.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isPair, isScalar, type Node, parseDocument, type Pair } from 'yaml';

export const VALUES_START = '<!-- values:start (generated from values.yaml by `npm run gen:docs`) -->';
export const VALUES_END = '<!-- values:end -->';

interface ValueRow {
  readonly key: string;
  readonly defaultValue: string;
  readonly description: string;
}

/** The comment beside a value, else the last paragraph of the comment above it (earlier ones head a group). */
function comment(pair: Pair): string {
  const key = pair.key as Node | null;
  const value = pair.value as Node | null;
  const beside = (value && isScalar(value) ? value.comment : undefined) ?? key?.comment;
  const above = key?.commentBefore?.split(/\n\s*\n/).pop();
  return (beside ?? above ?? '').replace(/\s*\n\s*/g, ' ').trim();
}

function rows(node: unknown, prefix: string, out: ValueRow[], inherited = ''): void {
  if (!isMap(node)) return;
  for (const pair of node.items) {
    if (!isPair(pair) || !isScalar(pair.key)) continue;
    const key = `${prefix}${String(pair.key.value)}`;
    const description = comment(pair) || inherited;
    if (isMap(pair.value) && pair.value.items.length > 0) {
      rows(pair.value, `${key}.`, out);
      continue;
    }
    const value = pair.value === null ? null : (pair.value as { toJSON(): unknown }).toJSON();
    out.push({ key, defaultValue: JSON.stringify(value), description });
  }
}

export function valueRows(repoRoot: string): ValueRow[] {
  const document = parseDocument(readFileSync(join(repoRoot, 'chart/values.yaml'), 'utf8'));
  const out: ValueRow[] = [];
  rows(document.contents, '', out);
  return out;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

export function renderValuesTable(repoRoot: string): string {
  const lines = ['| value | default | meaning |', '| --- | --- | --- |'];
  for (const row of valueRows(repoRoot))
    lines.push(`| \`${row.key}\` | \`${cell(row.defaultValue)}\` | ${cell(row.description)} |`);
  return lines.join('\n');
}

/** chart/README.md with its generated section replaced by the current table. */
export function withValuesTable(readme: string, repoRoot: string): string {
  const start = readme.indexOf(VALUES_START);
  const end = readme.indexOf(VALUES_END);
  if (start < 0 || end < start) throw new Error(`chart/README.md needs the markers ${VALUES_START} … ${VALUES_END}`);
  return `${readme.slice(0, start + VALUES_START.length)}\n\n${renderValuesTable(repoRoot)}\n\n${readme.slice(end)}`;
}
