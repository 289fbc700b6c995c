/**
 * Lets Node run the project's TypeScript directly (type stripping): it is written with the `.js`
 * import suffixes NodeNext wants, so this resolve hook maps a missing `./x.js` in our own code to
 * the `./x.ts` beside it. Used by `npm run gen:crds` and `npm run bench` (`node --import` this file).
 */
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const ownCode = (path: string): boolean => path.startsWith(repoRoot) && !path.includes('/node_modules/');

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL !== undefined) {
      const tsPath = fileURLToPath(new URL(`${specifier.slice(0, -'.js'.length)}.ts`, context.parentURL));
      if (ownCode(tsPath) && existsSync(tsPath)) return nextResolve(pathToFileURL(tsPath).href, context);
    }
    return nextResolve(specifier, context);
  },
});
