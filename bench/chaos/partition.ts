/**
 * Two operator replicas with leader election, as a Deployment with two replicas runs them. The
 * leader reaches the API server through a TCP proxy the test cuts for 30 s mid-rollout (a network
 * partition: its packets are dropped, nothing tells it). The other replica must take the Lease
 * and carry on; the cut-off one must stop leading by itself (renew deadline) and exit, so that
 * when the network comes back it does not act as leader; started again (as its Deployment would),
 * it must stay a follower to the end.
 */
import { CoordinationV1Api } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { NAMESPACE } from '../../test/e2e/skyhook-cluster.js';
import { until, type ChaosCluster } from './chaos-cluster.js';
import type { ScenarioRun } from './run-scenario.js';
import { startTcpProxy } from './tcp-proxy.js';

export const CUT_MS = 30_000;
/** The cut-off leader's renew deadline (10 s) plus its shutdown's hard limit (25 s), and slack. */
const EXIT_WITHIN_MS = 45_000;
const ACQUIRED = '"acquired the lease; leading"';

export async function partition(c: ChaosCluster): Promise<ScenarioRun> {
  const coordination = c.cp.kubeConfig.makeApiClient(CoordinationV1Api);
  let holder = '';
  const watchLease = setInterval(() => {
    coordination.listNamespacedLease({ namespace: NAMESPACE }).then(
      (list) => {
        holder = list.items[0]?.spec?.holderIdentity ?? '';
      },
      () => undefined,
    );
  }, 200);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(c.cp.server).port) });
  try {
    const proxied = c.kubeconfigVia(proxy.port, 'proxied');
    const first = await c.startOperator({ kubeconfigPath: proxied, leaderElect: true });
    await until('the first replica to lead', () => holder === first.identity, 60_000);
    const second = await c.startOperator({ leaderElect: true });
    await c.startRollout();
    await until('30% of the rollout', () => c.progress() >= 0.3, c.size.timeoutMs);

    const cutAt = Date.now();
    let firstExitedAt: number | undefined;
    void first.exited.then(() => (firstExitedAt = Date.now()));
    proxy.cut();
    const violations: string[] = [];
    await until('the second replica to take the Lease', () => holder === second.identity, CUT_MS).catch(() =>
      violations.push(
        `the second replica did not take the Lease within the ${CUT_MS / 1000} s cut (holder: ${holder})`,
      ),
    );
    const takeoverAt = Date.now();
    await new Promise((r) => setTimeout(r, Math.max(0, cutAt + CUT_MS - Date.now())));
    proxy.heal();
    const healedAt = Date.now();
    const firstExit = await Promise.race([
      first.exited,
      new Promise<string>((r) =>
        setTimeout(() => r('still running'), Math.max(0, cutAt + EXIT_WITHIN_MS - Date.now())),
      ),
    ]);
    const firstExitAfterCutMs = (firstExitedAt ?? NaN) - cutAt;
    if (firstExit === 'still running')
      violations.push(`the cut-off leader was still running ${EXIT_WITHIN_MS / 1000} s after the cut`);
    else if (firstExit === '0') violations.push('the cut-off leader exited 0; losing the Lease must exit non-zero');
    // Its Deployment starts it again: through the healed proxy it must find the Lease taken and wait.
    const restarted = await c.startOperator({ kubeconfigPath: proxied, leaderElect: true });
    await c.waitComplete().catch(() => undefined); // the runner reports an incomplete rollout
    if (holder !== second.identity) violations.push(`the Lease ended with ${holder}, not the replica that took over`);
    if (readFileSync(restarted.logFile, 'utf8').includes(ACQUIRED))
      violations.push('the restarted first replica acquired the Lease while the other one led');
    return {
      faults: [{ kind: 'partition', at: cutAt, endedAt: cutAt, from: takeoverAt }],
      planned: 1,
      violations,
      notes: {
        cutMs: healedAt - cutAt,
        takeoverMs: takeoverAt - cutAt,
        firstExit,
        firstExitAfterCutMs,
        proxiedConnections: proxy.connections(),
      },
    };
  } finally {
    clearInterval(watchLease);
    await proxy.stop();
  }
}
