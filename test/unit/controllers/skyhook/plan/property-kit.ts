/**
 * Pieces the planner's property tests share: random package sets and the round-by-round play of a
 * scenario (plan, apply, let each running stage finish, fail or keep running, advance the clock).
 */
import fc from 'fast-check';
import type { Interrupt, Package } from '../../../../../src/api/skyhook.js';
import { applyActions, pkg, plan, settleRunningOps, type World } from './world.js';

/** No interrupt, a reboot, or a containerd restart. */
export const simpleInterruptArb: fc.Arbitrary<Interrupt | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constant<Interrupt>({ type: 'reboot' }),
  fc.constant<Interrupt>({ type: 'service', services: ['containerd'] }),
);

const PACKAGE_NAMES = ['aa', 'bb', 'cc', 'dd'];

/** One to `max` root packages named aa, bb…, each with the interrupt drawn from `interrupts`. */
export function packagesArb(
  max: number,
  interrupts: fc.Arbitrary<Interrupt | undefined> = simpleInterruptArb,
): fc.Arbitrary<Record<string, Package>> {
  return fc.array(interrupts, { minLength: 1, maxLength: max }).map((drawn) => {
    const packages: Record<string, Package> = {};
    for (const [i, interrupt] of drawn.entries())
      packages[PACKAGE_NAMES[i]!] = pkg('1.0.0', interrupt ? { interrupt } : {});
    return packages;
  });
}

/** Per round, per running stage: 0 keeps running, 1 completes, 2 fails (when failures are on). */
export interface PlayedScenario {
  rounds: number[][];
  failures: boolean;
}

/** Plays every round: plan and apply, call `afterRound`, settle the running stages, advance a minute. */
export function playRounds(s: PlayedScenario, w: World, afterRound: (w: World) => void): void {
  for (const outcomes of s.rounds) {
    applyActions(w, plan(w).actions);
    afterRound(w);
    // With failures off, a stage drawn to fail keeps running instead.
    settleRunningOps(w, s.failures ? outcomes : outcomes.map((o) => (o === 2 ? 0 : o)));
    w.now += 60_000;
  }
}
