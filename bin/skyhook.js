#!/usr/bin/env node
// Launcher for the compiled CLI (npm's `prepare` compiles src/ to dist/ on `npm ci`).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(
    `skyhook needs Node >= 22.19 (this is ${process.version}); run it through npm scripts or npx, which use the node@24 dev dependency, or install Node 24.`,
  );
  process.exit(1);
}
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv.slice(2));
