/**
 * One chaos run's world: a control plane with simulated nodes, the simulated host side of reboots,
 * the recorder watching from before the rollout starts, operator processes from dist/ (each with
 * its own log), and a Skyhook rolling out a reboot package (apply, config, interrupt,
 * post-interrupt) over every node. Everything it started is stopped when the run ends, whatever
 * happens.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Skyhook } from '../../src/api/skyhook.js';
import { startControlPlane, type ControlPlane } from '../../src/sandbox/control-plane.js';
import { startSimulatedHost, type SimulatedHost } from '../../src/sandbox/simulated-host.js';
import { installOperatorPrerequisites, waitForSkyhook } from '../../test/e2e/skyhook-cluster.js';
import { createSkyhooks, say, simulatedPackage } from '../bench-cluster.js';
import { startOperatorProcess, type OperatorProcess } from '../operator-process.js';
import { recordCluster, type ClusterRecord } from './cluster-record.js';

export const SKYHOOK = 'chaos';
/** Stage Jobs per node of the reboot package. */
export const STAGES = ['apply', 'config', 'interrupt', 'post-interrupt'];

export interface ChaosSize {
  nodes: number;
  budget: number;
  /** Each simulated stage pod phase (a stage takes about two). */
  phaseMs: number;
  /** Longest the rollout may take, faults included. */
  timeoutMs: number;
}

export interface ChaosCluster {
  cp: ControlPlane;
  record: ClusterRecord;
  host: SimulatedHost;
  size: ChaosSize;
  /** Starts an operator process (leader election off unless asked), resolving once it runs. */
  startOperator(options?: { kubeconfigPath?: string; leaderElect?: boolean }): Promise<OperatorProcess>;
  /** Creates the Skyhook; the rollout starts. */
  startRollout(): Promise<void>;
  /** Stage Jobs of the rollout that succeeded so far, over all it needs. */
  progress(): number;
  /** Resolves when the Skyhook is complete (or rejects at timeoutMs from now). */
  waitComplete(): Promise<Skyhook>;
  /** A kubeconfig like the control plane's with another server address (a proxy's). */
  kubeconfigVia(port: number, name: string): string;
}

export async function withChaosCluster<T>(size: ChaosSize, body: (cluster: ChaosCluster) => Promise<T>): Promise<T> {
  const keepRunDir = process.env['BENCH_KEEP_RUN_DIR'] === '1';
  const cp = await startControlPlane({
    nodes: size.nodes,
    podDurationMs: size.phaseMs,
    keepRunDir,
    onProgress: (m) => say(`control plane: ${m}`),
  });
  if (keepRunDir) say(`run directory kept: ${cp.runDir}`);
  const operators: OperatorProcess[] = [];
  let host: SimulatedHost | undefined;
  let record: ClusterRecord | undefined;
  try {
    await installOperatorPrerequisites(cp);
    host = await startSimulatedHost(cp.kubeConfig);
    record = await recordCluster({ cp }, SKYHOOK);
    const recorded = record;
    const cluster: ChaosCluster = {
      cp,
      record,
      host,
      size,
      startOperator: async (options = {}) => {
        const operator = await startOperatorProcess(cp.runDir, options.kubeconfigPath ?? cp.kubeconfigPath, {
          name: `operator-${operators.length + 1}`,
          leaderElect: options.leaderElect ?? false,
        });
        operators.push(operator);
        return operator;
      },
      startRollout: () =>
        createSkyhooks(cp, [
          {
            metadata: { name: SKYHOOK },
            spec: {
              nodeSelectors: { matchLabels: { type: 'kwok' } },
              interruptionBudget: { count: size.budget },
              packages: { pkg: { ...simulatedPackage(`${size.phaseMs}ms`), interrupt: { type: 'reboot' } } },
            },
          },
        ]),
      progress: () =>
        [...recorded.jobs.jobs.values()].filter((j) => j.skyhook === SKYHOOK && j.succeeded).length /
        (size.nodes * STAGES.length),
      waitComplete: async () => {
        // The wait's watch fails while the API server restarts: wait again until the deadline.
        const deadline = Date.now() + size.timeoutMs;
        for (;;) {
          try {
            return await waitForSkyhook(
              { cp },
              SKYHOOK,
              (scr) => scr.status?.status === 'complete',
              Math.max(1000, deadline - Date.now()),
            );
          } catch (e) {
            if (Date.now() >= deadline) throw e;
            await new Promise((r) => setTimeout(r, 1000));
          }
        }
      },
      kubeconfigVia: (port, name) => {
        const path = join(cp.runDir, `kubeconfig-${name}`);
        writeFileSync(path, cp.kubeconfigYaml.replace(cp.server, `https://127.0.0.1:${port}`));
        return path;
      },
    };
    return await body(cluster);
  } finally {
    for (const operator of operators) await operator.stop();
    await record?.stop();
    await host?.stop();
    await cp.stop();
  }
}

/** Resolves once `done()` holds, checking every 50 ms; rejects after `timeoutMs` saying what it waited for. */
export async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A whole number of milliseconds in [min, max). */
export const randomMs = (min: number, max: number): number => Math.floor(min + Math.random() * (max - min));
