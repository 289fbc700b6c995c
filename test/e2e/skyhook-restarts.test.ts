/**
 * All state lives in the cluster: the `skyhook operator` process (built CLI, both controllers) is
 * SIGKILLed 5 times at random moments spread over a 6-node rollout with a budget of 2, a fresh process is
 * started each time, and the rollout still completes with exactly one Job per node and stage, so no
 * completed stage ran twice and none was lost.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import {
  createSkyhook,
  DEMO_LABEL,
  demoNodes,
  NAMESPACE,
  recordStageJobs,
  REPO_ROOT,
  startSkyhookHarness,
  waitForSkyhook,
  type SkyhookHarness,
} from './skyhook-harness.js';

let h: SkyhookHarness;
let child: ChildProcess | undefined;

beforeAll(async () => {
  h = await startSkyhookHarness(demoNodes(6, 0), { operatorInProcess: false });
}, 120_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  await h?.stop();
}, 60_000);

function startOperator(): ChildProcess {
  const entry = `${REPO_ROOT}bin/skyhook.js`;
  const proc = spawn(
    process.execPath,
    [
      entry,
      'operator',
      '--kubeconfig',
      h.cp.kubeconfigPath,
      '--leader-elect=false',
      '--namespace',
      NAMESPACE,
      '--health-port',
      '127.0.0.1:0',
      '--metrics-port',
      '127.0.0.1:0',
      '--log-level',
      'warn',
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, NAMESPACE },
    },
  );
  proc.stderr?.resume();
  return proc;
}

async function kill(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = once(proc, 'exit');
  proc.kill('SIGKILL');
  await exited;
}

describe('operator killed 5 times during a 6-node rollout', () => {
  it('completes, with exactly one Job per node and stage', async () => {
    if (!existsSync(`${REPO_ROOT}dist/cli/main.js`))
      throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
    const jobs = await recordStageJobs(h);
    child = startOperator();
    await createSkyhook(h, {
      metadata: { name: 'restarts' },
      spec: {
        nodeSelectors: { matchLabels: DEMO_LABEL },
        interruptionBudget: { count: 2 },
        packages: { pkg: { version: '1.0.0', image: 'ghcr.io/nvidia/skyhook-packages/shellscript' } },
      },
    });
    const kills: string[] = [];
    for (let i = 0; i < 5; i++) {
      // Each kill lands inside the rollout: a random moment after the (2i+1)th of its 12 Jobs appeared.
      await jobs.whenSeen(2 * i + 1);
      const after = Math.floor(Math.random() * 800);
      await delay(after);
      await kill(child);
      kills.push(`job ${2 * i + 1} + ${after} ms`);
      child = startOperator();
    }
    const done = await waitForSkyhook(h, 'restarts', (scr) => scr.status?.status === 'complete', 120_000);
    await kill(child);
    await jobs.stop();

    expect(done.status).toMatchObject({ completeNodes: '6/6', nodesInProgress: 0 });
    const all = [...jobs.jobs.values()];
    const perStage = new Map<string, number>();
    for (const job of all)
      perStage.set(`${job.node}/${job.stage}`, (perStage.get(`${job.node}/${job.stage}`) ?? 0) + 1);
    expect(perStage.size).toBe(12);
    expect([...perStage.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    expect(all.every((job) => job.succeeded)).toBe(true);
    const stages = jobs.stagesByNode('restarts');
    expect(Object.values(stages).every((s) => s.join() === 'apply,config')).toBe(true);
    console.log(`killed at ${kills.join(', ')}; ${all.length} Jobs`);
  }, 240_000);
});
