/**
 * `npm run gen:chart`: copies the manifests of config/ into chart/ (see chart-sources.ts), so the
 * kustomize install and the Helm chart share one source. Removes copies whose source is gone.
 * Node runs this file directly (type stripping); register-src-hook maps the `.js` import to `.ts`.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import './register-src-hook.ts';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const { expectedChartFiles } = await import('./chart-sources.js');
const expected = expectedChartFiles(repoRoot);

function listFiles(dir: string): string[] {
  const absolute = join(repoRoot, dir);
  let entries: string[];
  try {
    entries = readdirSync(absolute, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return entries.map((name) => join(dir, name)).filter((path) => /\.(ya?ml|json)$/.test(path));
}

for (const stale of [...listFiles('chart/crds'), ...listFiles('chart/files')].filter((p) => !expected.has(p))) {
  rmSync(join(repoRoot, stale));
  console.log(`removed ${stale}`);
}
for (const [path, bytes] of expected) {
  mkdirSync(dirname(join(repoRoot, path)), { recursive: true });
  writeFileSync(join(repoRoot, path), bytes);
  console.log(`wrote ${path}`);
}
