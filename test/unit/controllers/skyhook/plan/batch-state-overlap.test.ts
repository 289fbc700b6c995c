import { describe, expect, it } from '@jest/globals';
import { node, pkg, policy, runToQuiet, scr, SELECTOR_LABEL, world } from './world.js';

describe('overlap repro', () => {
  it('advances currentBatch', () => {
    const nodes = [
      node('w0', 0, { [SELECTOR_LABEL]: 'yes', region: 'us-west' }),
      node('w1', 1, { [SELECTOR_LABEL]: 'yes', region: 'us-west' }),
      node('p0', 2, { [SELECTOR_LABEL]: 'yes', env: 'production' }),
      node('p1', 3, { [SELECTOR_LABEL]: 'yes', env: 'production' }),
      node('b0', 4, { [SELECTOR_LABEL]: 'yes', region: 'us-west', env: 'production', both: 'yes' }),
      node('b1', 5, { [SELECTOR_LABEL]: 'yes', region: 'us-west', env: 'production', both: 'yes' }),
    ];
    const skyhook = scr('s', {
      deploymentPolicy: 'p',
      deploymentPolicyOptions: { resetBatchStateOnCompletion: false },
      packages: { a: pkg('1.0.0') },
    });
    const w = world([skyhook], nodes);
    const exp = { exponential: { initialBatch: 1, growthFactor: 2 } };
    w.policies = [
      policy('p', {
        default: { budget: { count: 1 } },
        compartments: [
          { name: 'us-west', selector: { matchLabels: { region: 'us-west' } }, budget: { count: 2 }, strategy: exp },
          { name: 'production', selector: { matchLabels: { env: 'production' } }, budget: { count: 2 }, strategy: exp },
          { name: 'prod-us-west', selector: { matchLabels: { both: 'yes' } }, budget: { count: 1 }, strategy: { fixed: { initialBatch: 1 } } },
        ],
      }),
    ];
    const seen: string[] = [];
    runToQuiet(w, 80, () => {
      const line = JSON.stringify(
        Object.fromEntries(
          Object.entries(skyhook.status?.compartmentStatuses ?? {}).map(([k, v]) => [k, [v.completed, v.batchState]]),
        ),
      );
      if (seen.at(-1) !== line) seen.push(line);
    });
    console.log(seen.join('\n'));
    expect(skyhook.status?.status).toBe('complete');
  });
});
