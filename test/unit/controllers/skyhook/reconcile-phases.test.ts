/** skyhook_reconcile_phase_seconds: each phase's time under its own label, a failed phase's too. */
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { ReconcilePhaseMetrics } from '../../../../src/controllers/skyhook/reconcile-phases.js';

async function countsOf(registry: Registry): Promise<Record<string, number>> {
  const text = await registry.getSingleMetricAsString('skyhook_reconcile_phase_seconds');
  return Object.fromEntries(
    [...text.matchAll(/^skyhook_reconcile_phase_seconds_count\{phase="(\w+)"\} (\d+)$/gm)].map((m) => [
      m[1]!,
      Number(m[2]),
    ]),
  );
}

describe('ReconcilePhaseMetrics', () => {
  it('observes each phase under its label and passes the result through', async () => {
    const registry = new Registry();
    const phases = new ReconcilePhaseMetrics(registry);
    await expect(phases.time('plan', async () => 42)).resolves.toBe(42);
    await phases.time('apply', async () => undefined);
    await phases.time('apply', async () => undefined);
    expect(await countsOf(registry)).toEqual({ plan: 1, apply: 2 });
  });

  it('observes a phase that throws, and rethrows', async () => {
    const registry = new Registry();
    const phases = new ReconcilePhaseMetrics(registry);
    await expect(
      phases.time('apply', async () => {
        throw new Error('409');
      }),
    ).rejects.toThrow('409');
    expect(await countsOf(registry)).toEqual({ apply: 1 });
  });
});
