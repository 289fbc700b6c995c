import { describe, expect, it } from '@jest/globals';
import { dependencyCycles, globMatches, quantityValue, skyhookSpecProblems } from '../../../src/api/spec-checks.js';
import type { Package } from '../../../src/api/skyhook.js';

const pkg = (fields: Partial<Package> = {}): Package => ({ version: '1.0.0', image: 'ghcr.io/x/pkg', ...fields });

describe('spec checks the API server cannot make', () => {
  it('finds each dependsOn cycle once', () => {
    expect(
      dependencyCycles({
        a: pkg({ dependsOn: { b: '1.0.0' } }),
        b: pkg({ dependsOn: { a: '1.0.0' } }),
        c: pkg({ dependsOn: { a: '1.0.0' } }),
      }),
    ).toEqual([['a', 'b', 'a']]);
    expect(dependencyCycles({ a: pkg({ dependsOn: { a: '1.0.0' } }) })).toEqual([['a', 'a']]);
    expect(dependencyCycles({ a: pkg(), b: pkg({ dependsOn: { a: '1.0.0' } }) })).toEqual([]);
  });

  it('matches globs with * only', () => {
    expect(globMatches('*.sh', 'apply.sh')).toBe(true);
    expect(globMatches('apply*', 'apply_check.sh')).toBe(true);
    expect(globMatches('*.conf', 'a.sh')).toBe(false);
    expect(globMatches('a.?', 'a.b')).toBe(false);
  });

  it('compares quantities', () => {
    expect(quantityValue('500m')).toBe(0.5);
    expect(quantityValue('1Gi')).toBe(2 ** 30);
    expect(quantityValue('1e3')).toBe(1000);
    expect(quantityValue(2)).toBe(2);
    expect(quantityValue('1G')).toBeLessThan(quantityValue('1Gi'));
  });

  it('reports every problem with the field it concerns', () => {
    const problems = skyhookSpecProblems({
      packages: {
        a: pkg({
          dependsOn: { b: '1.0.0' },
          configMap: { 'x.sh': '' },
          configInterrupts: { '*.conf': { type: 'reboot' } },
        }),
        b: pkg({
          dependsOn: { a: '1.0.0' },
          resources: { cpuRequest: '2', cpuLimit: '500m', memoryRequest: '1Gi', memoryLimit: '1G' },
        }),
      },
    });
    expect(problems).toEqual([
      'packages: dependsOn forms a cycle: a -> b -> a',
      'packages[a].configInterrupts: glob "*.conf" matches no configMap key',
      'packages[b].resources: cpuLimit is below cpuRequest',
      'packages[b].resources: memoryLimit is below memoryRequest',
    ]);
  });
});
