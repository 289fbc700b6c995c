/**
 * Bundles `skyhook operator` into one file, dist/bundle/operator.js, and `skyhook agent` into
 * dist/bundle/agent.js (run after `tsc`; part of
 * `npm run build` and of the image build). Why: @kubernetes/client-node is ~1000 ES modules and
 * 25 MB of source, and any typed API class or its KubeConfig loads all of it (ObjectParamAPI →
 * PromiseAPI → ObservableAPI → every API group); V8 keeps each module's source and Node a record
 * per module, so the operator held ~80 MB before any work. Bundled and tree-shaken, only the API
 * groups the operator calls remain (4 MB): import RSS 125 MB → 98 MB, same code, no runtime cost.
 * bin/skyhook.js runs the bundle for `skyhook operator` when it is at least as new as dist/cli/;
 * every other command (agent, plugin, sandbox …) runs from dist/ as before.
 *
 * `skyhook agent` is bundled the same way, into dist/bundle/agent.js, for start-up time rather than
 * memory: every stage container starts the agent once, and loading its ~90 ES modules one by one
 * (resolve, read, compile each) took as long as its work; the one file starts in half the time.
 *
 * Identifiers are kept (stack traces and class names read as in dist/); whitespace is minified
 * (its source is held in memory) and a linked source map is written beside it for reading traces
 * (not loaded at run time: that would cost memory). Packages stay in the bundle except esbuild
 * itself; CommonJS dependencies get `require` from createRequire. The bundle sits two levels under
 * the package root, like dist/api/, so `new URL('../../package.json', import.meta.url)` still finds
 * package.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

/** Each bundle: the dist/ module whose exports bin/skyhook.js calls, and the file it becomes. */
const BUNDLES = [
  { entry: 'dist/cli/operator.js', outfile: 'dist/bundle/operator.js' },
  { entry: 'dist/agent/cli.js', outfile: 'dist/bundle/agent.js' },
];

async function bundle(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    sourcemap: 'linked',
    legalComments: 'linked',
    logLevel: 'warning',
    banner: {
      js: "import { createRequire as __skyhookRequire } from 'node:module'; const require = __skyhookRequire(import.meta.url);",
    },
  });
  // esbuild escapes non-ASCII in strings but leaves it in regex literals (a few `µs` units), and one
  // such character makes V8 hold the whole source as a two-byte string: 4 MB more. \uXXXX means the
  // same character in a regex, string, template or comment, so every one is escaped (the source map
  // is off by a few columns on those lines only).
  const source = readFileSync(outfile, 'utf8');
  const ascii = source.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (ascii !== source) writeFileSync(outfile, ascii);
}

for (const { entry, outfile } of BUNDLES) await bundle(entry, outfile);
