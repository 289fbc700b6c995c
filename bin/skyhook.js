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
// `skyhook operator` and `skyhook agent` run their one-file bundles (scripts/bundle-operator.ts: the
// operator holds 25-30 MB less memory, the agent in every stage container starts in half the time)
// when they were built from the current dist/ (tsc rewrites every file of dist/, so a bundle older
// than its dist/ entry is stale); otherwise, and for every other command, dist/ as built by tsc.
const BUNDLED = {
  operator: { bundle: 'operator.js', compiled: 'cli/operator.js', run: 'runOperatorCli' },
  agent: { bundle: 'agent.js', compiled: 'agent/cli.js', run: 'runAgentCli' },
};
const target = Object.hasOwn(BUNDLED, argv[0] ?? '') ? BUNDLED[argv[0]] : undefined;
const bundle = target && new URL(`../dist/bundle/${target.bundle}`, import.meta.url);
const bundled = bundle && mtime(bundle);
const compiled = target && mtime(new URL(`../dist/${target.compiled}`, import.meta.url));
if (target && bundled !== undefined && compiled !== undefined && bundled >= compiled) {
  const entry = await import(bundle.href);
  process.exitCode = await entry[target.run](argv.slice(1));
} else {
  if (target && bundled !== undefined)
    console.error(
      `skyhook: dist/bundle/${target.bundle} is older than dist/; running from dist/ (\`npm run build\` refreshes it)`,
    );
  const { main } = await import('../dist/cli/main.js');
  process.exitCode = await main(argv);
}
