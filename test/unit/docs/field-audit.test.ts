/**
 * docs/reference/field-audit.md has a row for every field of every CRD (walked from the schemas in
 * src/api) and for every operator setting; each row names what the field does and the test that
 * proves it (or the API server's refusal). A field added without a row fails here.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RESOURCE_DEFINITIONS } from '../../../src/api/definitions.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOC = `${ROOT}docs/reference/field-audit.md`;

type Schema = {
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  patternProperties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};

/** Every field path under `schema`: `a.b`, `a.*.c` for map values, `a[].c` for list items. */
function fieldPaths(schema: Schema, path: string): string[] {
  const out: string[] = [];
  for (const sub of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])])
    out.push(...fieldPaths(sub, path));
  for (const [key, value] of Object.entries(schema.properties ?? {})) {
    const child = path === '' ? key : `${path}.${key}`;
    out.push(child, ...fieldPaths(value, child));
  }
  if (typeof schema.additionalProperties === 'object')
    out.push(...fieldPaths(schema.additionalProperties, `${path}.*`));
  for (const value of Object.values(schema.patternProperties ?? {})) out.push(...fieldPaths(value, `${path}.*`));
  if (schema.items) out.push(...fieldPaths(schema.items, `${path}[]`));
  return [...new Set(out)];
}

/** The first column of the doc's tables (back-quoted), per `## Kind` section. */
function rowsOf(doc: string): Map<string, { does: string; proof: string }> {
  const rows = new Map<string, { does: string; proof: string }>();
  let section = '';
  for (const line of doc.split('\n')) {
    const heading = /^## (\S+)/.exec(line);
    if (heading) section = heading[1]!;
    const row = /^\| `([^`]+)` \| (.*) \| (.*) \|$/.exec(line);
    if (row) rows.set(`${section} ${row[1]}`, { does: row[2]!.trim(), proof: row[3]!.trim() });
  }
  return rows;
}

/** The operator settings the chart offers (`settings:` in chart/values.yaml), in order. */
function chartSettings(): string[] {
  const values = readFileSync(`${ROOT}chart/values.yaml`, 'utf8').split('\n');
  const start = values.indexOf('settings:');
  const names: string[] = [];
  for (const line of values.slice(start + 1)) {
    if (!line.startsWith(' ') && line.trim() !== '') break;
    const name = /^ {2}([A-Z][A-Z0-9_]*):/.exec(line)?.[1];
    if (name) names.push(name);
  }
  return names;
}

/** A row `X.**` stands for X and every field under it (a Kubernetes type, or one shape repeated). */
function covered(rows: ReadonlyMap<string, unknown>, key: string): boolean {
  if (rows.has(key)) return true;
  return [...rows.keys()].some((row) => {
    if (!row.endsWith('.**')) return false;
    const base = row.slice(0, -3);
    return key === base || key.startsWith(`${base}.`) || key.startsWith(`${base}[`);
  });
}

describe('docs/reference/field-audit.md', () => {
  const doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
  const rows = rowsOf(doc);
  const known = new Set(
    RESOURCE_DEFINITIONS.flatMap((d) => fieldPaths(d.spec as Schema, 'spec').map((p) => `${d.names.kind} ${p}`)),
  );

  it('has a row for every spec field of every CRD', () => {
    expect([...known].filter((key) => !covered(rows, key))).toEqual([]);
  });

  it('has a row for every operator setting of the chart', () => {
    const settings = chartSettings();
    expect(settings.length).toBeGreaterThan(10);
    expect(settings.filter((name) => !rows.has(`Operator ${name}`))).toEqual([]);
  });

  it('lists no field the schemas do not have', () => {
    const stale = [...rows.keys()].filter(
      (key) => !key.startsWith('Operator ') && !known.has(key.endsWith('.**') ? key.slice(0, -3) : key),
    );
    expect(stale).toEqual([]);
  });

  it('names for every row what it does and the test that proves it', () => {
    const bare = [...rows].filter(([, row]) => row.does === '' || !/test\/(unit|e2e)\/|refused/.test(row.proof));
    expect(bare.map(([key]) => key)).toEqual([]);
  });

  it('names test files that exist', () => {
    const files = [...doc.matchAll(/`(test\/(?:unit|e2e)\/[^`:]+\.ts)/g)].map((m) => m[1]!);
    expect(files.filter((file) => !existsSync(`${ROOT}${file}`))).toEqual([]);
  });
});
