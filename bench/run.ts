/**
 * `npm run bench`: the performance figures, printed as JSON (one object per benchmark).
 * `npm run bench -- NAME…` runs only the named ones. Without names it runs the quick ones (those of
 * `DEFAULT`): the 1000- and 5000-node rollouts (rollout-1000-signed too) take many minutes each and are run by name.
 */
import '../scripts/register-src-hook.ts';

type Bench = () => Promise<Record<string, unknown>>;

const benches: Record<string, () => Promise<Bench>> = {
  'control-plane-start': async () => (await import('./control-plane-start.js')).controlPlaneStart,
  'rollout-100': async () => (await import('./rollout.js')).rolloutBenchmark('rollout-100'),
  'rollout-1000': async () => (await import('./rollout.js')).rolloutBenchmark('rollout-1000'),
  'rollout-1000x5': async () => (await import('./rollout.js')).rolloutBenchmark('rollout-1000x5'),
  'rollout-5000': async () => (await import('./rollout.js')).rolloutBenchmark('rollout-5000'),
  'rollout-1000-signed': async () => (await import('./rollout.js')).rolloutBenchmark('rollout-1000-signed'),
  'memory-1000': async () => (await import('./memory.js')).memory,
  planner: async () => (await import('./planner.js')).planner,
  'status-write': async () => (await import('./status-write.js')).statusWrite,
  'priority-chain': async () => (await import('./priority-chain.js')).priorityChain,
};

const DEFAULT = ['control-plane-start', 'rollout-100', 'memory-1000'];
const wanted = process.argv.slice(2);
for (const name of wanted.length ? wanted : DEFAULT) {
  const load = benches[name];
  if (!load) {
    console.error(`unknown benchmark '${name}'; known: ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
  const result = await (await load())();
  console.log(JSON.stringify({ benchmark: name, ...result }));
}
