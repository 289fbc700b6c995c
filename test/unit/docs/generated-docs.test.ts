/**
 * The generated reference pages (docs/reference/crds/*, names, metrics, settings, cli) and the values
 * table of chart/README.md are what their sources generate now, and every CRD field has a
 * description (the pages and `kubectl explain` show it). A failure names the page; `npm run gen:docs`
 * rewrites them (after `npm run build` when a command's --help changed).
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { undescribedFields } from '../../../scripts/gen-docs/crd-reference.js';
import { generatedPages } from '../../../scripts/gen-docs/pages.js';
import { RESOURCE_DEFINITIONS } from '../../../src/api/definitions.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('generated reference pages', () => {
  const pages = generatedPages(ROOT);

  it('cover every kind, the names, metrics, settings, the CLI and the chart values', () => {
    expect([...pages.keys()].sort()).toEqual(
      [
        ...RESOURCE_DEFINITIONS.map((def) => `docs/reference/crds/${def.names.singular}.md`),
        'docs/reference/names.md',
        'docs/reference/metrics.md',
        'docs/reference/settings.md',
        'docs/reference/cli.md',
        'chart/README.md',
      ].sort(),
    );
  });

  it.each([...pages.keys()])('%s is what `npm run gen:docs` writes from its source', (path) => {
    expect(readFileSync(join(ROOT, path), 'utf8')).toBe(pages.get(path));
  });

  it.each(RESOURCE_DEFINITIONS.map((def) => [def.names.kind, def] as const))(
    'every field of %s has a description',
    (_kind, def) => {
      expect(undescribedFields(def)).toEqual([]);
    },
  );

  it('list each CRD field with its type, default and validation', () => {
    const skyhook = pages.get('docs/reference/crds/skyhook.md')!;
    expect(skyhook).toMatch(/\| `spec\.priority` \| integer \| {2}\| `200` \| ≥ 1 \| .+ \|/);
    expect(skyhook).toContain('| `spec.packages.<key>.interrupt.type` | string | yes |');
  });
});
