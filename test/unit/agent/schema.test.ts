/** Schema v1: the published JSON file matches the schema the agent uses, and what it accepts. */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageConfigSchemaJson } from '../../../src/agent/config-schema.js';
import { checkConfigSchema, jsonPath } from '../../../src/agent/schema-check.js';
import { packageConfig, REPO, SHELLSCRIPT_PACKAGE, type StepSpec } from '../../agent/harness.js';

describe('the published schema file', () => {
  it('is exactly what `skyhook agent schema` prints (regenerate: skyhook agent schema > src/agent/schema/config-v1.schema.json)', () => {
    expect(readFileSync(join(REPO, 'src/agent/schema/config-v1.schema.json'), 'utf8')).toBe(packageConfigSchemaJson());
  });

  it('is draft 2020-12 with upstream id and one shared step definition', () => {
    const schema = JSON.parse(packageConfigSchemaJson()) as Record<string, unknown>;
    expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema['$id']).toBe('v1/skyhook-agent-schema.json');
    expect(Object.keys((schema['$defs'] as Record<string, unknown>) ?? {})).toEqual(['step']);
  });
});

describe('checkConfigSchema', () => {
  it('accepts the shellscript package and unknown keys anywhere', () => {
    expect(checkConfigSchema(JSON.parse(readFileSync(join(SHELLSCRIPT_PACKAGE, 'config.json'), 'utf8'))).ok).toBe(true);
    const config = packageConfig(
      { apply: [{ path: 'a.sh', requires_interrupt: true } as StepSpec] },
      { root_dir: 'x' },
    );
    expect(checkConfigSchema(config).ok).toBe(true);
  });

  it('treats env as optional and requires every other step key', () => {
    const config = packageConfig({ apply: [{ path: 'a.sh' }] });
    const step = (config['modes'] as Record<string, Record<string, unknown>[]>)['apply']?.[0] ?? {};
    delete step['env'];
    expect(checkConfigSchema(config).ok).toBe(true);
    for (const key of ['name', 'path', 'arguments', 'returncodes', 'on_host', 'idempotence', 'upgrade_step']) {
      const broken = structuredClone(config);
      delete (broken['modes'] as Record<string, Record<string, unknown>[]>)['apply']?.[0]?.[key];
      expect(checkConfigSchema(broken)).toEqual({
        ok: false,
        problems: [`$.modes.apply[0]: missing required property '${key}'`],
      });
    }
  });

  it.each(['0.0.0', '1.2.3', '10.20.30', '1.0.0-alpha.1', '1.0.0-rc.1+build.5', '1.0.0+20130313144700'])(
    'accepts version %s',
    (version) => {
      expect(checkConfigSchema(packageConfig({ apply: [] }, { package_version: version })).ok).toBe(true);
    },
  );

  it.each(['1', '1.0', '01.0.0', '1.0.0-', '1.0.0-01', 'v1.0.0', '1.0.0 '])('rejects version %j', (version) => {
    expect(checkConfigSchema(packageConfig({ apply: [] }, { package_version: version })).ok).toBe(false);
  });

  it('reports all violations, each with its JSON path', () => {
    const result = checkConfigSchema({ schema_version: 'v1', package_name: 3, modes: { apply: [{ name: 'x y' }] } });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        "$: missing required property 'package_version'",
        "$: missing required property 'expected_config_files'",
        '$.package_name: must be string',
        "$.modes.apply[0]: missing required property 'path'",
        '$.modes.apply[0].name: must match pattern "^[a-zA-Z0-9_\\-.]+$"',
      ]),
    );
  });

  it('rejects schema versions other than v1', () => {
    expect(checkConfigSchema(packageConfig({ apply: [] }, { schema_version: 'latest' }))).toEqual({
      ok: false,
      problems: [expect.stringContaining('Unknown skyhook-agent schema version: latest')],
    });
  });

  it('writes JSON pointers as readable paths', () => {
    expect(jsonPath('')).toBe('$');
    expect(jsonPath('/modes/apply-check/0/env/A~1B')).toBe('$.modes["apply-check"][0].env["A/B"]');
  });
});
