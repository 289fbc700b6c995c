/**
 * The e2e form of a chaos scenario (bench/chaos/): the short size, the result printed as the JSON
 * line `npm run chaos` prints, and each promise asserted on its own so a failure names it.
 */
import { expect } from '@jest/globals';
import { existsSync } from 'node:fs';
import { runScenario, type ScenarioResult } from '../../bench/chaos/run-scenario.js';
import { SCENARIOS } from '../../bench/chaos/scenarios.js';
import { REPO_ROOT } from './skyhook-cluster.js';

export async function expectScenarioHolds(name: string): Promise<ScenarioResult> {
  if (!existsSync(`${REPO_ROOT}dist/cli/main.js`))
    throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  const { scenario, size } = SCENARIOS[name]!('short');
  const result = await runScenario(name, scenario, size);
  console.log(JSON.stringify(result));
  expect(result.completed).toBe(true);
  expect(result.stagesRunTwice).toEqual([]);
  expect(result.unexplainedStarts).toEqual([]);
  expect(result.maxDisrupted).toBeLessThanOrEqual(size.budget);
  expect(result.leftCordonedOrTainted).toEqual([]);
  expect(result.violations).toEqual([]);
  expect(result.faultsSurvived).toBe(result.faultsPlanned);
  return result;
}
