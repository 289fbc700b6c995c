/** The load-time rules, without a file system. */
import { describe, expect, it } from '@jest/globals';
import { checkPackageRules, expectedCheckPath } from '../../../src/agent/package-rules.js';
import type { PackageConfig } from '../../../src/agent/config-schema.js';
import { packageConfig, type StepSpec } from '../../agent/harness.js';

const config = (modes: Record<string, StepSpec[]>): PackageConfig => packageConfig(modes) as unknown as PackageConfig;
const everyFile = (): boolean => true;
const ok = { apply: [{ path: 'a.sh' }], 'apply-check': [{ path: 'a_check.sh' }] };

describe('checkPackageRules', () => {
  it('accepts a paired package without warnings', () => {
    expect(checkPackageRules(config(ok), everyFile)).toEqual({ errors: [], warnings: [] });
  });

  it('needs a non-empty check mode for every action mode with steps, but not for an empty one', () => {
    expect(
      checkPackageRules(config({ ...ok, config: [{ path: 'c.sh' }], 'config-check': [] }), everyFile).errors,
    ).toEqual(["$.modes: There are no checks for any of the config steps: 'config-check' needs at least one step."]);
    expect(checkPackageRules(config({ ...ok, config: [] }), everyFile).errors).toEqual([]);
  });

  it('needs at least one step and one action mode key', () => {
    expect(checkPackageRules(config({ apply: [] }), everyFile).errors).toEqual([
      '$.modes: There are no defined steps.',
    ]);
    expect(checkPackageRules(config({ 'apply-check': [{ path: 'a_check.sh' }] }), everyFile).errors).toEqual([
      expect.stringContaining('There are only check modes defined'),
    ]);
  });

  it('allows upgrade steps only in upgrade modes and only without arguments', () => {
    const inUpgrade = {
      upgrade: [{ path: 'u.sh', upgrade_step: true }],
      'upgrade-check': [{ path: 'u_check.sh', upgrade_step: true }],
    };
    expect(checkPackageRules(config(inUpgrade), everyFile).errors).toEqual([]);
    expect(
      checkPackageRules(
        config({ ...ok, config: [{ path: 'c.sh', upgrade_step: true }], 'config-check': [{ path: 'c_check.sh' }] }),
        everyFile,
      ).errors,
    ).toEqual([
      '$.modes["config"][0]: upgrade step c.sh defined in the config mode but can only be defined in the upgrade or upgrade-check modes.',
    ]);
    expect(
      checkPackageRules(
        config({
          upgrade: [{ path: 'u.sh', upgrade_step: true, arguments: ['a'] }],
          'upgrade-check': [{ path: 'u_check.sh' }],
        }),
        everyFile,
      ).errors,
    ).toEqual([
      expect.stringMatching(/^\$\.modes\["upgrade"\]\[0\]\.arguments: upgrade step upgrade can not have any arguments/),
    ]);
  });

  it('lists every missing step file', () => {
    const present = new Set(['a.sh']);
    expect(
      checkPackageRules(
        config({ apply: [{ path: 'a.sh' }, { path: 'b.sh' }], 'apply-check': [{ path: 'a_check.sh' }] }),
        (p) => present.has(p),
      ).errors,
    ).toEqual([
      '$.modes["apply"][1].path: step file \'b.sh\' does not exist in skyhook_dir',
      '$.modes["apply-check"][0].path: step file \'a_check.sh\' does not exist in skyhook_dir',
    ]);
  });

  it('rejects unknown mode keys but ignores interrupt', () => {
    const modes = { ...ok, interrupt: [], install: [] } as unknown as Record<string, StepSpec[]>;
    expect(checkPackageRules(config(modes), everyFile).errors).toEqual([
      expect.stringContaining("unknown mode 'install'"),
    ]);
  });

  it('warns when an action script has no <name>_check script among the checks, and on step keys upstream refuses', () => {
    const pkg = config({ apply: [{ path: 'a.sh' }], 'apply-check': [{ path: 'verify.sh' }] });
    Object.assign(pkg.modes['apply']?.[0] ?? {}, { timeout: 5 });
    expect(checkPackageRules(pkg, everyFile).warnings).toEqual([
      '$.modes["apply"][0]: unknown step key \'timeout\' (the upstream agent refuses it)',
      "a_check.sh doesn't exist. Checks ensure that all tasks in the step will complete.",
    ]);
  });

  it.each([
    ['apply.sh', 'apply_check.sh'],
    ['steps/run.py', 'steps/run_check.py'],
    ['install', 'install_check'],
    ['a.b.sh', 'a.b_check.sh'],
  ])('expects %s to be checked by %s', (action, check) => {
    expect(expectedCheckPath(action)).toBe(check);
  });
});
