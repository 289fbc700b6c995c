/**
 * `npm run bench`: the performance figures, printed as JSON (one object per benchmark).
 * `npm run bench -- NAME…` runs only the named ones.
 */
import '../scripts/register-src-hook.ts';

type Bench = () => Promise<Record<string, unknown>>;

const benches: Record<string, () => Promise<Bench>> = {
  'control-plane-start': async () => (await import('./control-plane-start.js')).controlPlaneStart,
  'rollout-100': async () => (await import('./rollout.js')).rollout,
  'memory-1000': async () => (await import('./memory.js')).memory,
  planner: async () => (await import('./planner.js')).planner,
};

const wanted = process.argv.slice(2);
for (const name of wanted.length ? wanted : Object.keys(benches)) {
  const load = benches[name];
  if (!load) {
    console.error(`unknown benchmark '${name}'; known: ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
  const result = await (await load())();
  console.log(JSON.stringify({ benchmark: name, ...result }));
}
