/** `skyhook agent validate`: every problem of a package at once, each message naming it. */
import { afterAll, describe, expect, it } from '@jest/globals';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatValidationReport, validatePackage } from '../../../src/agent/validate.js';
import { FIXTURES, packageConfig, SHELLSCRIPT_PACKAGE, writePackage, type StepSpec } from '../../agent/harness.js';

const work = mkdtempSync(join(tmpdir(), 'skyhook-validate-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let count = 0;
function pkg(config: unknown, scripts: Record<string, string | { body: string; mode: number }> = {}): string {
  return writePackage(join(work, `pkg-${count++}`), config, scripts);
}
const SH = '#!/bin/sh\n';
const pair = (extra: Record<string, StepSpec[]> = {}): Record<string, StepSpec[]> => ({
  apply: [{ path: 'a.sh' }],
  'apply-check': [{ path: 'a_check.sh' }],
  ...extra,
});
const scripts = { 'a.sh': SH, 'a_check.sh': SH };
const mutate = (change: (config: Record<string, unknown>) => void): Record<string, unknown> => {
  const config = packageConfig(pair());
  change(config);
  return config;
};
const stepOf = (config: Record<string, unknown>, mode = 'apply'): Record<string, unknown> =>
  ((config['modes'] as Record<string, Record<string, unknown>[]>)[mode] ?? [])[0] ?? {};

describe('valid packages', () => {
  it.each([
    ['packages/shellscript', SHELLSCRIPT_PACKAGE],
    ['the tuning-like fixture', join(FIXTURES, 'tuning-like')],
    ['a config.json path', join(SHELLSCRIPT_PACKAGE, 'config.json')],
  ])('%s passes with a one-line OK', (_label, target) => {
    const report = validatePackage(target);
    expect(report.errors).toEqual([]);
    const { ok, text } = formatValidationReport(report);
    expect(ok).toBe(true);
    expect(text).toMatch(/^OK: [^\n]+$/);
  });
});

describe('broken packages', () => {
  const broken: Array<[string, () => string, RegExp]> = [
    [
      'config.json is not JSON',
      () => {
        const dir = pkg({}, scripts);
        writeFileSync(join(dir, 'config.json'), '{"schema_version": ');
        return dir;
      },
      /config\.json: .*JSON/,
    ],
    [
      'a required key is missing',
      () =>
        pkg(
          mutate((c) => delete c['package_version']),
          scripts,
        ),
      /^\$: missing required property 'package_version'$/,
    ],
    [
      'the version is not semver',
      () =>
        pkg(
          mutate((c) => (c['package_version'] = '1.0')),
          scripts,
        ),
      /^\$\.package_version: must match pattern/,
    ],
    [
      'the version has a leading zero',
      () =>
        pkg(
          mutate((c) => (c['package_version'] = '1.02.0')),
          scripts,
        ),
      /^\$\.package_version: must match pattern/,
    ],
    [
      'the schema version is unknown',
      () =>
        pkg(
          mutate((c) => (c['schema_version'] = 'v2')),
          scripts,
        ),
      /Unknown skyhook-agent schema version: v2/,
    ],
    [
      'a step name has bad characters',
      () =>
        pkg(
          mutate((c) => (stepOf(c)['name'] = 'bad name!')),
          scripts,
        ),
      /^\$\.modes\.apply\[0\]\.name: must match pattern/,
    ],
    [
      'returncodes is empty',
      () =>
        pkg(
          mutate((c) => (stepOf(c)['returncodes'] = [])),
          scripts,
        ),
      /^\$\.modes\.apply\[0\]\.returncodes: must NOT have fewer than 1 items$/,
    ],
    [
      'idempotence is not a boolean',
      () =>
        pkg(
          mutate((c) => (stepOf(c)['idempotence'] = 'yes')),
          scripts,
        ),
      /^\$\.modes\.apply\[0\]\.idempotence: must be boolean$/,
    ],
    [
      'a step file is missing',
      () => pkg(packageConfig(pair()), { 'a_check.sh': SH }),
      /\$\.modes\["apply"\]\[0\]\.path: step file 'a\.sh' does not exist/,
    ],
    [
      'a step script is not executable',
      () => pkg(packageConfig(pair()), { 'a.sh': { body: SH, mode: 0o644 }, 'a_check.sh': SH }),
      /step script 'a\.sh' is not executable/,
    ],
    [
      'a helper *.sh is not executable',
      () => pkg(packageConfig(pair()), { ...scripts, 'lib/helpers.sh': { body: SH, mode: 0o600 } }),
      /skyhook_dir\/lib\/helpers\.sh: shell script is not executable/,
    ],
    [
      'an action mode has no check',
      () => pkg(packageConfig(pair({ config: [{ path: 'a.sh' }] })), scripts),
      /no checks for any of the config steps/,
    ],
    [
      'there are only check modes',
      () => pkg(packageConfig({ 'apply-check': [{ path: 'a_check.sh' }] }), scripts),
      /only check modes defined/,
    ],
    ['there are no steps at all', () => pkg(packageConfig({ apply: [] }), scripts), /There are no defined steps/],
    [
      'an upgrade step sits in apply',
      () => pkg(packageConfig(pair({ apply: [{ path: 'a.sh', upgrade_step: true }] })), scripts),
      /upgrade step a\.sh defined in the apply mode/,
    ],
    [
      'an upgrade step has arguments',
      () =>
        pkg(
          packageConfig(
            pair({
              upgrade: [{ path: 'a.sh', upgrade_step: true, arguments: ['x'] }],
              'upgrade-check': [{ path: 'a_check.sh' }],
            }),
          ),
          scripts,
        ),
      /upgrade step upgrade can not have any arguments/,
    ],
    [
      'a mode name is unknown',
      () => pkg(packageConfig(pair({ install: [{ path: 'a.sh' }] })), scripts),
      /unknown mode 'install'/,
    ],
  ];

  it.each(broken)('rejects a package where %s', (_label, make, message) => {
    const report = validatePackage(make());
    expect(report.errors).toEqual(expect.arrayContaining([expect.stringMatching(message)]));
    const { ok, text } = formatValidationReport(report);
    expect(ok).toBe(false);
    expect(text).toMatch(/^INVALID: /);
  });

  it('has at least 10 distinct cases', () =>
    expect(new Set(broken.map(([label]) => label)).size).toBeGreaterThanOrEqual(10));

  it('reports every problem at once', () => {
    const dir = pkg(
      packageConfig({
        apply: [{ path: 'gone.sh', upgrade_step: true }, { path: 'a.sh' }],
        config: [{ path: 'a.sh' }],
        'config-check': [{ path: 'a_check.sh' }],
      }),
      {
        'a.sh': { body: SH, mode: 0o644 },
        'a_check.sh': SH,
      },
    );
    const { errors } = validatePackage(dir);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/no checks for any of the apply steps/),
        expect.stringMatching(/upgrade step gone\.sh defined in the apply mode/),
        expect.stringMatching(/step file 'gone\.sh' does not exist/),
        expect.stringMatching(/step script 'a\.sh' is not executable/),
      ]),
    );
    expect(errors).toHaveLength(4);
  });

  it('reports a package dir that does not exist', () => {
    expect(validatePackage(join(work, 'nope')).errors[0]).toMatch(/ENOENT/);
    chmodSync(work, 0o755);
  });
});
