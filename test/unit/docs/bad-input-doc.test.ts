/** docs/bad-input.md shows the rows bad-input.test.ts checks, and README links to it. */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { badInputTable } from '../../e2e/bad-input-table.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('docs/bad-input.md', () => {
  it('has the table of test/e2e/bad-input-table.ts (regenerate it with badInputTable() when rows change)', () => {
    expect(readFileSync(`${ROOT}docs/bad-input.md`, 'utf8')).toContain(badInputTable());
  });

  it('names no field the API accepts but the operator does not apply (docs/reference/field-audit.md has them all)', () => {
    expect(readFileSync(`${ROOT}docs/bad-input.md`, 'utf8')).not.toMatch(/accepted[^.]*but not (applied|used|read)/i);
  });

  it('is linked from README', () => {
    expect(readFileSync(`${ROOT}README.md`, 'utf8')).toContain('(docs/bad-input.md)');
  });
});
