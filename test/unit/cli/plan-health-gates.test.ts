/**
 * `skyhook plan` with health gates: the simulation plays the rollout forward on the gates' results
 * as they stand, so a failing gate shows as the node's wait (and, past its timeout, its error), and
 * the next batch as waiting, without running into the pass limit.
 */
import { describe, expect, it } from '@jest/globals';
import { gateKey } from '../../../src/api/health-gates.js';
import { simulateRollout } from '../../../src/cli/plan/simulation.js';
import { node, pkg, plannerInput, policy, scr, world } from '../controllers/skyhook/plan/world.js';

describe('skyhook plan with health gates', () => {
  it('shows the first node held by its failing beforeBatch gate until its timeout, then the next batch', () => {
    const w = world(
      [scr('k', { deploymentPolicy: 'p', packages: { a: pkg('1.0.0') } })],
      [node('n0', 0), node('n1', 1)],
    );
    w.policies = [
      policy('p', {
        default: { budget: { count: 1 }, strategy: { fixed: { initialBatch: 1 } } },
        healthGates: {
          beforeBatch: [{ name: 'ready', timeout: '10m', nodeConditions: [{ type: 'Ready', status: 'True' }] }],
        },
      }),
    ];
    const failing = { passed: false, detail: 'condition Ready is False, want True' };
    const input = {
      ...plannerInput(w),
      healthGates: { problems: {}, results: { p: { n0: { [gateKey('beforeBatch', 'ready')]: failing }, n1: {} } } },
    };
    const simulation = simulateRollout(input, 'k');
    expect(simulation.truncated).toBe(false);
    expect(simulation.nodes['n0']?.holds[0]).toMatch(/^HealthGate: beforeBatch gate ready: condition Ready is False/);
    expect(simulation.holdAtEnd['n0']).toBe(
      'HealthGateTimedOut: beforeBatch gate ready did not pass within 10m: condition Ready is False, want True',
    );
    expect(simulation.statusAtEnd['n0']).toBe('erroring');
    // Failed, n0 leaves the batch and n1 runs; its own gate has no result yet, so it waits too.
    expect(simulation.nodes['n1']?.batch).toBe(2);
  });
});
