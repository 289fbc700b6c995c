import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  validateDeploymentPolicy,
  validateDisruptionBudget,
  validateMaintenancePolicy,
  validateNodeOp,
  validatePackageTrustPolicy,
  validateSkyhook,
  type ValidationResult,
} from '../../../src/api/validators.js';
import { CONFIG_DIR, README_DEMO } from './repo-paths.js';

type Doc = { kind: string; metadata: { name: string } } & Record<string, unknown>;

function readDocuments(file: string): Doc[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => doc.toJSON() as Doc);
}

const validatorByKind: Record<string, (doc: unknown) => ValidationResult<unknown>> = {
  Skyhook: validateSkyhook,
  DeploymentPolicy: validateDeploymentPolicy,
  NodeOp: validateNodeOp,
  DisruptionBudget: validateDisruptionBudget,
  MaintenancePolicy: validateMaintenancePolicy,
  PackageTrustPolicy: validatePackageTrustPolicy,
};

const sampleDir = join(CONFIG_DIR, 'samples');
const samples = readdirSync(sampleDir)
  .filter((file) => file.endsWith('.yaml'))
  .flatMap((file) =>
    readDocuments(join(sampleDir, file)).map((doc) => [`${file}: ${doc.kind}/${doc.metadata.name}`, doc] as const),
  );

/** The demo's spec as the tests below edit it: loosely typed, since they write values the schema refuses. */
interface DemoSpec {
  packages: { tuning: Record<string, unknown> };
  [field: string]: unknown;
}

/** The upstream README demo, changed by one path; for documents ajv must refuse. */
function demoWith(change: (spec: DemoSpec) => void): unknown {
  const doc = structuredClone(readDocuments(README_DEMO)[0]!) as unknown as { spec: DemoSpec };
  change(doc.spec);
  return doc;
}

function expectRefused(result: ValidationResult<unknown>, fieldPath: string): void {
  expect(result.ok).toBe(false);
  if (!result.ok) expect(result.errors.join('\n')).toContain(fieldPath);
}

describe('ajv validators', () => {
  it('accept the upstream README demo unchanged and fill in the upstream defaults', () => {
    const result = validateSkyhook(readDocuments(README_DEMO)[0]);
    if (!result.ok) throw new Error(result.errors.join('\n'));
    expect(result.value.spec).toMatchObject({
      serial: false,
      pause: false,
      runtimeRequired: false,
      autoTaintNewNodes: false,
      runtimeRequiredCordonAfter: false,
      priority: 200,
      sequencing: 'node',
    });
    expect(result.value.spec.packages?.['tuning']?.version).toBe('1.1.0');
  });

  it.each(samples)('accept config/samples/%s', (_name, doc) => {
    const validate = validatorByKind[doc.kind];
    expect(validate).toBeDefined();
    const result = validate!(doc);
    if (!result.ok) throw new Error(result.errors.join('\n'));
  });

  it('leave the document they are given untouched', () => {
    const doc = readDocuments(README_DEMO)[0]!;
    const before = JSON.stringify(doc);
    validateSkyhook(doc);
    expect(JSON.stringify(doc)).toBe(before);
  });

  it("fill in DeploymentPolicy strategy defaults as upstream's webhook does", () => {
    const result = validateDeploymentPolicy({
      apiVersion: 'skyhook.nvidia.com/v1alpha1',
      kind: 'DeploymentPolicy',
      metadata: { name: 'p' },
      spec: { default: { budget: { count: 1 }, strategy: { linear: {} } } },
    });
    if (!result.ok) throw new Error(result.errors.join('\n'));
    expect(result.value.spec.default.strategy.linear).toEqual({
      initialBatch: 1,
      batchThreshold: 100,
      safetyLimit: 50,
      delta: 1,
    });
    expect(result.value.spec.resetBatchStateOnCompletion).toBe(true);
  });

  it.each([
    ['version latest', 'spec.packages.tuning.version', (s: DemoSpec) => (s['packages'].tuning.version = 'latest')],
    [
      'version with leading zero',
      'spec.packages.tuning.version',
      (s: DemoSpec) => (s['packages'].tuning.version = '1.01.0'),
    ],
    ['empty version', 'spec.packages.tuning.version', (s: DemoSpec) => (s['packages'].tuning.version = '')],
    ['missing image', 'spec.packages.tuning', (s: DemoSpec) => delete s['packages'].tuning.image],
    [
      'interrupt type outside the enum',
      'spec.packages.tuning.interrupt.type',
      (s: DemoSpec) => (s['packages'].tuning.interrupt = { type: 'shutdown' }),
    ],
    ['name breaking the pattern', 'spec.packages.tuning.name', (s: DemoSpec) => (s['packages'].tuning.name = 'Tuning')],
    [
      'percent above 100',
      'spec.interruptionBudget.percent',
      (s: DemoSpec) => (s['interruptionBudget'] = { percent: 101 }),
    ],
    ['priority 0', 'spec.priority', (s: DemoSpec) => (s['priority'] = 0)],
    [
      'negative stageTimeout',
      'spec.packages.tuning.stageTimeout',
      (s: DemoSpec) => (s['packages'].tuning.stageTimeout = '-1s'),
    ],
    ['sequencing outside the enum', 'spec.sequencing', (s: DemoSpec) => (s['sequencing'] = 'cluster')],
    [
      'bad quantity',
      'spec.packages.tuning.resources.cpuLimit',
      (s: DemoSpec) => (s['packages'].tuning.resources = { cpuLimit: 'lots' }),
    ],
    [
      'short containerSHA',
      'spec.packages.tuning.containerSHA',
      (s: DemoSpec) => (s['packages'].tuning.containerSHA = 'sha256:abc'),
    ],
  ])('refuse a Skyhook with %s', (_what, path, change) => expectRefused(validateSkyhook(demoWith(change)), path));

  it('refuse a DeploymentPolicy without a default strategy and a NodeOp without command', () => {
    expectRefused(
      validateDeploymentPolicy({
        apiVersion: 'skyhook.nvidia.com/v1alpha1',
        kind: 'DeploymentPolicy',
        metadata: { name: 'p' },
        spec: { default: { budget: { count: 1 } } },
      }),
      'spec.default',
    );
    expectRefused(
      validateNodeOp({
        apiVersion: 'skyhook.nvidia.com/v1alpha1',
        kind: 'NodeOp',
        metadata: { name: 'n' },
        spec: { image: 'busybox' },
      }),
      'spec',
    );
  });
});
