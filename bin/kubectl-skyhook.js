#!/usr/bin/env node
// kubectl plugin entry: `kubectl skyhook <command>` is `skyhook <command>`.
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv.slice(2));
