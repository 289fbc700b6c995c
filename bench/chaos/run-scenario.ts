/**
 * Runs one chaos scenario from start to verdict: a fresh cluster, the scenario's operators and
 * faults during the rollout, then the rollout must complete, the nodes must come back clean, and
 * the recording is judged (verdict.ts). Also checks that every node was rebooted exactly once (a
 * reboot is a completed interrupt stage: done twice is a stage run twice).
 */
import { say } from '../bench-cluster.js';
import { SKYHOOK, until, withChaosCluster, type ChaosCluster, type ChaosSize } from './chaos-cluster.js';
import { leftovers, judge, mirroredTaintLeft, rebootsOf, type Fault, type Verdict } from './verdict.js';

export interface ScenarioRun {
  faults: Fault[];
  /** Faults the scenario meant to inject (fewer injected is a failure: the rollout ended first). */
  planned: number;
  /** Nodes that must end complete (all, unless the scenario deleted some). */
  expectedNodes?: string[];
  /** The scenario's own broken promises. */
  violations?: string[];
  notes?: Record<string, unknown>;
}

export type Scenario = (cluster: ChaosCluster) => Promise<ScenarioRun>;

export interface ScenarioResult extends Omit<Verdict, 'recoveries'> {
  recoveries?: Verdict['recoveries'];
  scenario: string;
  nodes: number;
  faultsPlanned: number;
  faultsSurvived: number;
  completed: boolean;
  completeNodes: string | undefined;
  rolloutMs: number;
  rebootsPerNode: { min: number; max: number };
  notes: Record<string, unknown>;
  ok: boolean;
}

/** How long the nodes get to lose the last cordon marks after the Skyhook reports complete. */
const SETTLE_MS = 15_000;

export async function runScenario(name: string, scenario: Scenario, size: ChaosSize): Promise<ScenarioResult> {
  return withChaosCluster(size, async (cluster) => {
    say(`${name}: ${size.nodes} nodes, budget ${size.budget}`);
    const started = Date.now();
    const progress = setInterval(
      () =>
        say(
          `${name}: ${(cluster.progress() * 100).toFixed(0)}% of stage Jobs done, ${((Date.now() - started) / 1000).toFixed(0)} s`,
        ),
      15_000,
    );
    let run: ScenarioRun;
    let done: Awaited<ReturnType<ChaosCluster['waitComplete']>> | undefined;
    const violations: string[] = [];
    try {
      run = await scenario(cluster);
      done = await cluster.waitComplete().catch((e: unknown) => {
        violations.push(`the rollout did not complete: ${e instanceof Error ? e.message.slice(0, 300) : String(e)}`);
        return undefined;
      });
    } finally {
      clearInterval(progress);
    }
    const rolloutMs = Date.now() - started;
    const { record } = cluster;
    const expected = run.expectedNodes ?? Array.from({ length: size.nodes }, (_, i) => `node-${i}`);
    const clean = (n: string): boolean =>
      leftovers(record.latest().get(n)!).length === 0 && !mirroredTaintLeft(record.latest().get(n)!);
    await until('the nodes to be left clean', () => expected.every(clean), SETTLE_MS).catch(() => undefined);
    const verdict = judge(record, run.faults, size.budget);
    if (done && done.status?.completeNodes !== `${expected.length}/${expected.length}`)
      violations.push(`completeNodes ${done.status?.completeNodes}, expected ${expected.length}/${expected.length}`);
    if (run.faults.length < run.planned)
      violations.push(`only ${run.faults.length} of ${run.planned} faults were injected before the rollout ended`);
    const reboots = rebootsOf(record, expected);
    const notOnce = expected.map((node, i) => `${node} ×${reboots[i]}`).filter((_, i) => reboots[i] !== 1);
    if (notOnce.length) violations.push(`nodes rebooted other than once: ${notOnce.join(', ')}`);
    const all = [...violations, ...(run.violations ?? []), ...verdict.violations];
    // Fifty kills make a long list: each fault's own figure only when there are few.
    const { recoveries, ...figures } = verdict;
    return {
      scenario: name,
      nodes: size.nodes,
      ...figures,
      ...(recoveries.length <= 10 ? { recoveries } : {}),
      violations: all,
      faultsPlanned: run.planned,
      faultsSurvived: all.length === 0 ? run.faults.length : 0,
      completed: done !== undefined,
      completeNodes: done?.status?.completeNodes,
      rolloutMs,
      rebootsPerNode: { min: Math.min(...reboots), max: Math.max(...reboots) },
      notes: { skyhook: SKYHOOK, phaseMs: size.phaseMs, faultKinds: countKinds(run.faults), ...run.notes },
      ok: all.length === 0,
    };
  });
}

function countKinds(faults: Fault[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const fault of faults) counts[fault.kind] = (counts[fault.kind] ?? 0) + 1;
  return counts;
}
