/**
 * The API server restarted three times during the rollout and etcd once (stopped and started with
 * the same flags, ports and data), at set points of its progress. The operator, KWOK, the
 * controller-manager and the scheduler must reconnect by themselves; nothing here helps them.
 */
import type { RestartableComponent } from '../../src/sandbox/control-plane.js';
import { until, type ChaosCluster } from './chaos-cluster.js';
import type { ScenarioRun } from './run-scenario.js';
import type { Fault } from './verdict.js';

const RESTARTS: { component: RestartableComponent; atProgress: number }[] = [
  { component: 'kube-apiserver', atProgress: 0.15 },
  { component: 'kube-apiserver', atProgress: 0.35 },
  { component: 'etcd', atProgress: 0.55 },
  { component: 'kube-apiserver', atProgress: 0.75 },
];

export async function controlPlaneRestarts(c: ChaosCluster): Promise<ScenarioRun> {
  await c.startOperator();
  await c.startRollout();
  const faults: Fault[] = [];
  const downMs: number[] = [];
  for (const { component, atProgress } of RESTARTS) {
    await until(`${atProgress * 100}% of the rollout`, () => c.progress() >= atProgress, c.size.timeoutMs);
    const at = Date.now();
    await c.cp.restart(component);
    faults.push({ kind: `${component}-restart`, at, endedAt: Date.now() });
    downMs.push(Date.now() - at);
  }
  return { faults, planned: RESTARTS.length, notes: { restartMs: downMs } };
}
