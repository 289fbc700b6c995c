import '../scripts/register-src-hook.ts';
const { rollout } = await import('./rollout.js');
console.log(JSON.stringify(await rollout({ nodes: 20, budget: 10, keepRunDir: true })));
