/**
 * One source for every manifest: the chart's copies of config/ (chart/crds/, chart/files/) are
 * byte for byte what `npm run gen:chart` writes, the chart's version follows package.json, and the
 * chart has a value for every setting the operator reads from its environment.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { expectedChartFiles } from '../../../scripts/chart-sources.js';
import { AGENT_ENV_DOC } from '../../../src/agent/settings.js';
import { RESOURCE_DEFINITIONS } from '../../../src/api/definitions.js';
import { NODEOP_ENV_DOC } from '../../../src/templates/nodeop-settings.js';
import { REPO_ROOT } from '../../helm-binary.js';

/** Set by the chart from the pod itself (namespace, name) or tied to its container ports. */
const FROM_THE_POD = new Set(['NAMESPACE', 'POD_NAMESPACE', 'POD_NAME', 'PROBE_PORT', 'METRICS_PORT', 'KUBECONFIG']);
/** Files whose `env['NAME']` reads are operator settings. */
const SETTINGS_SOURCES = [
  'src/controllers/skyhook/skyhook-settings.ts',
  'src/templates/nodeop-settings.ts',
  'src/api/operator-version.ts',
  'src/cli/operator.ts',
  'src/controllers/trust/registry-access.ts',
];

function operatorEnvNames(): string[] {
  const names = new Set<string>();
  for (const file of SETTINGS_SOURCES) {
    // env['NAME'], and absolute('NAME', …), which reads env[name] for a path setting.
    const text = readFileSync(join(REPO_ROOT, file), 'utf8');
    for (const match of text.matchAll(/(?:env\[|absolute\()'([A-Z0-9_]+)'/g)) names.add(match[1]!);
  }
  for (const [name] of NODEOP_ENV_DOC) names.add(name);
  // The interrupt commands the operator's reboot and interrupt pods run (readNodeOpSettings reads them).
  for (const [name] of AGENT_ENV_DOC) if (name.endsWith('_COMMAND')) names.add(name);
  names.add('NODE_OPTIONS');
  return [...names].filter((name) => !FROM_THE_POD.has(name)).sort();
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => /\.(ya?ml|json)$/.test(path))
    .sort();
}

describe('the chart has one source, config/', () => {
  const expected = expectedChartFiles(REPO_ROOT);

  it('copies every CRD and every manifest it renders byte for byte (run `npm run gen:chart` after changing config/)', () => {
    for (const [path, bytes] of expected) {
      expect({ path, same: readFileSync(join(REPO_ROOT, path)).equals(bytes) }).toEqual({ path, same: true });
    }
    expect([...expected.keys()].filter((p) => p.startsWith('chart/crds/'))).toHaveLength(RESOURCE_DEFINITIONS.length);
  });

  it('holds no copy whose source is gone', () => {
    expect([...filesUnder('chart/crds'), ...filesUnder('chart/files')]).toEqual([...expected.keys()].sort());
  });

  it("versions the chart's app as package.json and config/manager's image", () => {
    const chart = parse(readFileSync(join(REPO_ROOT, 'chart/Chart.yaml'), 'utf8')) as { appVersion: string };
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart.appVersion).toBe(pkg.version);
    expect(readFileSync(join(REPO_ROOT, 'config/manager/manager.yaml'), 'utf8')).toContain(
      `image: ghcr.io/skyhook-ts/skyhook:${pkg.version}`,
    );
  });

  it('has a value and a schema entry for every setting the operator reads from its environment', () => {
    const values = parse(readFileSync(join(REPO_ROOT, 'chart/values.yaml'), 'utf8')) as {
      settings: Record<string, unknown>;
    };
    const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'chart/values.schema.json'), 'utf8')) as {
      properties: { settings: { properties: Record<string, unknown> } };
    };
    const names = operatorEnvNames();
    expect(names.length).toBeGreaterThanOrEqual(15);
    expect(Object.keys(values.settings).sort()).toEqual(names);
    expect(Object.keys(schema.properties.settings.properties).sort()).toEqual(names);
  });
});
