/**
 * The chaos scenarios by name, at the size (`npm run chaos`: 100 nodes, budget 10) and at
 * the short size the e2e tests run (fewer nodes and faults, so the suite stays a few minutes).
 */
import type { ChaosSize } from './chaos-cluster.js';
import { controlPlaneRestarts } from './control-plane-restarts.js';
import { handFaults } from './hand-faults.js';
import { operatorKills } from './operator-kills.js';
import { partition } from './partition.js';
import type { Scenario } from './run-scenario.js';

export interface ScenarioSpec {
  scenario: Scenario;
  full: ChaosSize;
  short: ChaosSize;
}

const FULL: ChaosSize = { nodes: 100, budget: 10, phaseMs: 500, timeoutMs: 15 * 60_000 };

export const SCENARIOS: Record<string, (size: 'full' | 'short') => { scenario: Scenario; size: ChaosSize }> = {
  'operator-kills': (size) =>
    size === 'full'
      ? { scenario: operatorKills(50), size: FULL }
      : { scenario: operatorKills(8), size: { nodes: 12, budget: 3, phaseMs: 400, timeoutMs: 4 * 60_000 } },
  'control-plane-restarts': (size) => ({
    scenario: controlPlaneRestarts,
    size: size === 'full' ? FULL : { nodes: 12, budget: 3, phaseMs: 500, timeoutMs: 4 * 60_000 },
  }),
  // The 30 s cut needs a rollout that outlasts it: longer stages at the short size.
  'partition-and-lease': (size) => ({
    scenario: partition,
    size: size === 'full' ? FULL : { nodes: 12, budget: 3, phaseMs: 1500, timeoutMs: 5 * 60_000 },
  }),
  // Longer stages, so a fault picked mid-stage lands before the stage ends.
  'hand-faults': (size) => ({
    scenario: handFaults,
    size: size === 'full' ? { ...FULL, phaseMs: 1500 } : { nodes: 14, budget: 3, phaseMs: 1500, timeoutMs: 5 * 60_000 },
  }),
};
