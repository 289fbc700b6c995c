#!/usr/bin/env node
// Launcher for the compiled CLI (npm's `prepare` compiles src/ to dist/ on `npm ci`).
import { statSync } from 'node:fs';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(
    `skyhook needs Node >= 22.19 (this is ${process.version}); run it through npm scripts or npx, which use the node@24 dev dependency, or install Node 24.`,
  );
  process.exit(1);
}

/** Modification time in ms, or undefined when the file is missing. */
function mtime(url) {
  try {
    return statSync(url).mtimeMs;
  } catch {
    return undefined;
  }
}

const argv = process.argv.slice(2);
// `skyhook operator` runs the one-file bundle (scripts/bundle-operator.ts: 25-30 MB less memory)
// when it was built from the current dist/ (tsc rewrites every file of dist/, so a bundle older
// than dist/cli/operator.js is stale); otherwise, and for every other command, dist/ as built by tsc.
const bundle = new URL('../dist/bundle/operator.js', import.meta.url);
const bundled = mtime(bundle);
const compiled = mtime(new URL('../dist/cli/operator.js', import.meta.url));
if (argv[0] === 'operator' && bundled !== undefined && compiled !== undefined && bundled >= compiled) {
  const { runOperatorCli } = await import(bundle.href);
  process.exitCode = await runOperatorCli(argv.slice(1));
} else {
  if (argv[0] === 'operator' && bundled !== undefined)
    console.error(
      'skyhook: dist/bundle/operator.js is older than dist/; running from dist/ (`npm run build` refreshes it)',
    );
  const { main } = await import('../dist/cli/main.js');
  process.exitCode = await main(argv);
}
