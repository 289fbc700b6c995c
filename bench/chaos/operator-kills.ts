/**
 * The operator SIGKILLed at random moments of the rollout (as a crash or an OOM kill would end it),
 * each time followed by a fresh process, as the Deployment's restart would. Kills stop when the
 * rollout is nearly done, so every one lands mid-rollout.
 */
import { randomMs, type ChaosCluster } from './chaos-cluster.js';
import type { ScenarioRun } from './run-scenario.js';
import type { Fault } from './verdict.js';

/** Longest pause between a fresh operator running and the next kill. */
const MAX_GAP_MS = 2000;
/** Past this share of stage Jobs done the rollout may end before a kill lands. */
const LAST_KILL_PROGRESS = 0.97;

export function operatorKills(kills: number) {
  return async (c: ChaosCluster): Promise<ScenarioRun> => {
    let operator = await c.startOperator();
    await c.startRollout();
    const faults: Fault[] = [];
    const killedAfterMs: number[] = [];
    while (faults.length < kills && c.progress() < LAST_KILL_PROGRESS) {
      const gap = randomMs(0, MAX_GAP_MS);
      await new Promise((r) => setTimeout(r, gap));
      if (c.progress() >= LAST_KILL_PROGRESS) break;
      const at = Date.now();
      await operator.kill();
      operator = await c.startOperator();
      faults.push({ kind: 'operator-kill', at, endedAt: Date.now() });
      killedAfterMs.push(gap);
    }
    const restartMs = faults.map((f) => f.endedAt - f.at);
    return {
      faults,
      planned: kills,
      notes: { killedAfterRunningMs: killedAfterMs, restartMsMax: Math.max(...restartMs) },
    };
  };
}
