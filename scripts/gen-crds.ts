/**
 * `npm run gen:crds`: writes config/crd/*.yaml from the schemas in src/api.
 * Node runs this file directly (type stripping) and src/ is written with the `.js` import suffixes
 * NodeNext wants, so a resolve hook maps a missing `./x.js` inside src/ to the `./x.ts` beside it.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = join(repoRoot, 'src');

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL !== undefined) {
      const tsPath = fileURLToPath(new URL(`${specifier.slice(0, -'.js'.length)}.ts`, context.parentURL));
      if (tsPath.startsWith(srcDir) && existsSync(tsPath)) return nextResolve(pathToFileURL(tsPath).href, context);
    }
    return nextResolve(specifier, context);
  },
});

const { generateCrdFiles } = await import('../src/api/crd-files.js');
const outDir = join(repoRoot, 'config/crd');
mkdirSync(outDir, { recursive: true });
for (const [name, content] of generateCrdFiles()) {
  writeFileSync(join(outDir, name), content);
  console.log(`wrote config/crd/${name}`);
}
