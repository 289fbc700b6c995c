/**
 * `npm run gen:crds`: writes config/crd/*.yaml from the schemas in src/api.
 * Node runs this file directly (type stripping); register-src-hook lets it import src/ as written.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import './register-src-hook.ts';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

const { generateCrdFiles } = await import('../src/api/crd-files.js');
const outDir = join(repoRoot, 'config/crd');
mkdirSync(outDir, { recursive: true });
for (const [name, content] of generateCrdFiles()) {
  writeFileSync(join(outDir, name), content);
  console.log(`wrote config/crd/${name}`);
}
