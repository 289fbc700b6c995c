/**
 * `npm run gen:docs`: writes the generated reference pages (CRD fields, names, metrics, settings,
 * CLI) and the values table of chart/README.md from their sources (gen-docs/pages.ts).
 * Node runs this file directly (type stripping); register-src-hook maps the `.js` imports to `.ts`.
 * The CLI pages run `bin/skyhook.js`, i.e. dist/: run `npm run build` first when src/cli changed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import './register-src-hook.ts';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const { generatedPages } = await import('./gen-docs/pages.js');
for (const [path, content] of generatedPages(repoRoot)) {
  mkdirSync(dirname(join(repoRoot, path)), { recursive: true });
  writeFileSync(join(repoRoot, path), content);
  console.log(`wrote ${path}`);
}
