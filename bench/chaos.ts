/**
 * `npm run chaos`: the chaos scenarios at full size (100 simulated nodes, budget 10, a reboot
 * package), one JSON line per scenario on stdout (progress on stderr). `npm run chaos -- NAME…`
 * runs only the named ones; `CHAOS_SIZE=short` runs the e2e tests' sizes. Exits 1 if any scenario
 * broke a promise. The operator runs from dist/: `npm run build` first.
 */
import '../scripts/register-src-hook.ts';

// Loaded once the hook above maps `.js` to `.ts` (static imports are resolved before it runs).
const { runScenario } = await import('./chaos/run-scenario.js');
const { SCENARIOS } = await import('./chaos/scenarios.js');

const size = process.env['CHAOS_SIZE'] === 'short' ? 'short' : 'full';
const wanted = process.argv.slice(2);
let failed = false;
for (const name of wanted.length ? wanted : Object.keys(SCENARIOS)) {
  const spec = SCENARIOS[name];
  if (!spec) {
    console.error(`unknown scenario '${name}'; known: ${Object.keys(SCENARIOS).join(', ')}`);
    process.exit(2);
  }
  const { scenario, size: chosen } = spec(size);
  const result = await runScenario(name, scenario, chosen);
  failed ||= !result.ok;
  console.log(JSON.stringify(result));
}
process.exit(failed ? 1 : 0);
