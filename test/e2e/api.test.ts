/**
 * The API and the install against a real API server: `kubectl apply -k config/default`, the samples
 * and the upstream README demo accepted with upstream's defaults, invalid documents refused with a
 * message naming the field, printer columns, and the operator's exact permissions.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import {
  OPERATOR_CLUSTER_PERMISSIONS,
  OPERATOR_NAMESPACE,
  OPERATOR_NAMESPACE_PERMISSIONS,
  OPERATOR_SERVICE_ACCOUNT,
  type Permission,
} from '../../src/api/operator-rbac.js';
import { startControlPlane, type ControlPlane } from '../../src/sandbox/control-plane.js';
import { waitCrdsEstablished } from '../../src/sandbox/crds-established.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README_DEMO = join(REPO_ROOT, '../shared/examples/skyhook-readme-demo.yaml');
const GROUP_VERSION = 'skyhook.nvidia.com/v1alpha1';
const CRDS = ['skyhooks', 'deploymentpolicies', 'nodeops'].map((plural) => `crd/${plural}.skyhook.nvidia.com`);

let cp: ControlPlane;

async function kubectl(args: string[], input?: string): Promise<string> {
  const result = await cp.kubectl(args, input === undefined ? undefined : { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

async function getJson(resource: string, name: string, namespace?: string): Promise<unknown> {
  const ns = namespace === undefined ? [] : ['-n', namespace];
  return JSON.parse(await kubectl(['get', resource, name, ...ns, '-o', 'json'])) as unknown;
}

/** The value at `path` in a JSON document, undefined where the path breaks off: for expect() to compare. */
function at(doc: unknown, ...path: (string | number)[]): unknown {
  let value = doc;
  for (const key of path)
    value = typeof value === 'object' && value !== null ? (value as Record<string | number, unknown>)[key] : undefined;
  return value;
}

beforeAll(async () => {
  cp = await startControlPlane({ nodes: 0 });
}, 300_000);

afterAll(async () => {
  await cp?.stop();
}, 120_000);

describe('install', () => {
  it('kubectl kustomize config/default renders without warnings', async () => {
    const result = await cp.kubectl(['kustomize', join(REPO_ROOT, 'config/default')]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const kinds = parseAllDocuments(result.stdout).map((doc) => (doc.toJSON() as { kind: string }).kind);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'Namespace',
        'CustomResourceDefinition',
        'ClusterRole',
        'Role',
        'Deployment',
        'Service',
        'PodDisruptionBudget',
      ]),
    );
  });

  it('kubectl apply --server-side -k config/default succeeds and the CRDs become established', async () => {
    await kubectl(['apply', '--server-side', '-k', join(REPO_ROOT, 'config/default')]);
    await waitCrdsEstablished(cp, CRDS);
    const deployment = await getJson('deployment', 'skyhook-operator', OPERATOR_NAMESPACE);
    expect(at(deployment, 'spec', 'replicas')).toBe(2);
  });
});

describe('valid documents', () => {
  beforeAll(async () => {
    await waitCrdsEstablished(cp, CRDS);
  });

  /** What upstream's CRD defaults (and its webhook's round trip) leave in a spec that set none of them. */
  const upstreamSpecDefaults = {
    serial: false,
    pause: false,
    runtimeRequired: false,
    autoTaintNewNodes: false,
    priority: 200,
    // Newer upstream's fields, with their defaults.
    sequencing: 'node',
    runtimeRequiredCordonAfter: false,
  };

  it('accepts the upstream README demo unchanged and fills in the defaults', async () => {
    await kubectl(['apply', '--server-side', '-f', README_DEMO]);
    const demo = await getJson('skyhook', 'demo');
    expect(at(demo, 'spec')).toMatchObject(upstreamSpecDefaults);
    expect(at(demo, 'spec', 'packages', 'tuning')).toMatchObject({
      version: '1.1.0',
      image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
    });
    await kubectl(['delete', 'skyhook', 'demo']);
  });

  it('accepts config/samples/demo.yaml and fills in the defaults', async () => {
    await kubectl(['apply', '--server-side', '-f', join(REPO_ROOT, 'config/samples/demo.yaml')]);
    const demo = await getJson('skyhook', 'demo');
    expect(at(demo, 'spec')).toMatchObject(upstreamSpecDefaults);
    expect(at(demo, 'spec', 'nodeSelectors')).toEqual({ matchLabels: { 'skyhook.nvidia.com/test-node': 'demo' } });
  });

  it.each([
    'interrupts.yaml',
    'budget.yaml',
    'deployment-policy.yaml',
    'maintenance-window.yaml',
    'nodeop.yaml',
    'non-interruptible.yaml',
    'disruption-budget.yaml',
  ])('accepts config/samples/%s', async (file) => {
    await kubectl(['apply', '--server-side', '-f', join(REPO_ROOT, 'config/samples', file)]);
  });

  it("fills in DeploymentPolicy strategy defaults as upstream's webhook does", async () => {
    const policy = await getJson('deploymentpolicy', 'staged');
    expect(at(policy, 'spec', 'default', 'strategy', 'fixed')).toEqual({
      initialBatch: 1,
      batchThreshold: 100,
      safetyLimit: 50,
    });
    expect(at(policy, 'spec', 'compartments', 1, 'strategy', 'exponential')).toEqual({
      initialBatch: 2,
      growthFactor: 2,
      failureThreshold: 2,
      batchThreshold: 100,
      safetyLimit: 50,
    });
    expect(at(policy, 'spec', 'resetBatchStateOnCompletion')).toBe(true);
  });

  it('fills in NodeOp defaults', async () => {
    const op = await getJson('nodeop', 'prune-images', OPERATOR_NAMESPACE);
    expect(at(op, 'spec')).toMatchObject({ hostMountPath: '/host', rebootOnSuccess: true, concurrency: 2 });
    expect(at(op, 'spec', 'drainOptions')).toEqual({
      enabled: true,
      timeoutSeconds: 600,
      force: false,
      ignoreDaemonSets: true,
      deleteEmptyDirData: false,
      disableEviction: false,
    });
  });

  it.each([
    ['an image with a registry port', { image: 'registry:5000/pkg' }],
    ['an image with a registry port and a tag equal to the version', { image: 'localhost:5000/team/pkg:1.1.0' }],
    ['version 1', { version: '1' }],
    ['version 1.2', { version: '1.2' }],
    ['version v1.2.3', { version: 'v1.2.3' }],
    ['a prerelease version', { version: '2024.7.7-test' }],
    ['build metadata', { version: '1.0.0+build.7' }],
    ['integer quantities', { resources: { cpuRequest: 1, cpuLimit: 2, memoryRequest: '64Mi', memoryLimit: '1Gi' } }],
    [
      'limits equal to requests in other units (1 = 1000m, 1Gi = 1024Mi)',
      { resources: { cpuRequest: '1000m', cpuLimit: 1, memoryRequest: '1024Mi', memoryLimit: '1Gi' } },
    ],
    [
      'limits above requests across units (1Gi > 1G, 1.5 > 1200m)',
      { resources: { cpuRequest: '1200m', cpuLimit: '1.5', memoryRequest: '1G', memoryLimit: '1Gi' } },
    ],
    ['its own pull secrets', { imagePullSecrets: [{ name: 'team-a' }, { name: 'registry.team-b' }] }],
    [
      'a glob configInterrupt',
      { configMap: { 'a.conf': 'x' }, configInterrupts: { '*.conf': { type: 'service', services: ['containerd'] } } },
    ],
  ])('accepts a package with %s', async (_what, fields) => {
    const doc = skyhook({ packages: { tuning: { ...basePackage(), ...fields } } });
    await kubectl(['create', '--dry-run=server', '-f', '-'], stringify(doc));
  });

  it('treats a null interruptionBudget field as unset', async () => {
    await kubectl(
      ['create', '--dry-run=server', '-f', '-'],
      stringify(skyhook({ interruptionBudget: { percent: null, count: 2 } })),
    );
  });
});

function basePackage(): Record<string, unknown> {
  return {
    version: '1.1.0',
    image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
    configMap: { 'apply.sh': 'echo hi' },
  };
}

function skyhook(spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'Skyhook',
    metadata: { name: 'invalid' },
    spec: { packages: { tuning: basePackage() }, ...spec },
  };
}

function withPackage(fields: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return skyhook({ packages: { tuning: { ...basePackage(), ...fields }, ...extra } });
}

function policy(spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'DeploymentPolicy',
    metadata: { name: 'invalid' },
    spec: { default: { budget: { percent: 10 }, strategy: { fixed: {} } }, ...spec },
  };
}

function disruptionBudget(spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: GROUP_VERSION, kind: 'DisruptionBudget', metadata: { name: 'invalid' }, spec };
}

const TRUSTED_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ type: 'spki', format: 'pem' })
  .toString();

function trustPolicy(spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'PackageTrustPolicy',
    metadata: { name: 'invalid' },
    spec: {
      keys: [{ name: 'release', publicKey: TRUSTED_KEY }],
      images: [{ prefix: 'ghcr.io/nvidia/', keys: ['release'] }],
      ...spec,
    },
  };
}

function compartment(name: string, labels: Record<string, string> = { pool: name }): Record<string, unknown> {
  return { name, selector: { matchLabels: labels }, budget: { count: 1 } };
}

function nodeOp(spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'NodeOp',
    metadata: { name: 'invalid', namespace: 'default' },
    spec: { command: ['true'], ...spec },
  };
}

const stageOf = (stage: string): Record<string, unknown> => ({
  skyhook: 'demo',
  package: { name: 'tuning', version: '1.1.0', image: 'ghcr.io/nvidia/skyhook-packages/shellscript' },
  stage,
});

/** [what is wrong, document, text the error must contain (the offending field, and the reason)]. */
const invalidDocuments: [string, Record<string, unknown>, string[]][] = [
  // Skyhook
  [
    'interruptionBudget with percent and count',
    skyhook({ interruptionBudget: { percent: 10, count: 2 } }),
    ['spec.interruptionBudget', 'percent and count are mutually exclusive'],
  ],
  [
    'deploymentPolicy with interruptionBudget',
    skyhook({ deploymentPolicy: 'staged', interruptionBudget: { count: 2 } }),
    ['spec.deploymentPolicy', 'deploymentPolicy and interruptionBudget are mutually exclusive'],
  ],
  [
    'interruptionBudget percent above 100',
    skyhook({ interruptionBudget: { percent: 101 } }),
    ['spec.interruptionBudget.percent'],
  ],
  [
    'a package name that differs from its key',
    withPackage({ name: 'other' }),
    ['spec.packages', 'name, when set, must equal its map key'],
  ],
  [
    'a package name breaking the pattern',
    withPackage({ name: 'Tuning' }),
    ['spec.packages.tuning.name', 'should match'],
  ],
  [
    'a package key breaking the name pattern',
    skyhook({ packages: { 'Tuning-': basePackage() } }),
    ['spec.packages', 'every package name (map key) must match'],
  ],
  ['version latest', withPackage({ version: 'latest' }), ['spec.packages.tuning.version', 'should match']],
  ['an empty version', withPackage({ version: '' }), ['spec.packages.tuning.version']],
  [
    'a version with a leading zero',
    withPackage({ version: '1.02.3' }),
    ['spec.packages.tuning.version', 'should match'],
  ],
  [
    'a prerelease on a short version',
    withPackage({ version: '1.2-rc1' }),
    ['spec.packages.tuning.version', 'should match'],
  ],
  [
    'no image',
    skyhook({ packages: { tuning: { version: '1.1.0' } } }),
    ['spec.packages.tuning.image', 'Required value'],
  ],
  [
    'an image whose tag differs from the version',
    withPackage({ image: 'localhost:5000/team/pkg:2.0.0' }),
    ['spec.packages[tuning].image', 'tag that differs from version'],
  ],
  [
    'an image with an inline digest',
    withPackage({ image: `ghcr.io/x/pkg@sha256:${'a'.repeat(64)}` }),
    ['spec.packages[tuning].image', 'digest'],
  ],
  [
    'a malformed containerSHA',
    withPackage({ containerSHA: 'sha256:abc' }),
    ['spec.packages.tuning.containerSHA', 'should match'],
  ],
  [
    'resources not all set',
    withPackage({ resources: { cpuRequest: '100m', cpuLimit: '200m' } }),
    ['spec.packages[tuning].resources', 'set all of cpuRequest, cpuLimit, memoryRequest and memoryLimit'],
  ],
  [
    'a zero resource request',
    withPackage({ resources: { cpuRequest: '0', cpuLimit: '1', memoryRequest: '1Mi', memoryLimit: '1Mi' } }),
    ['spec.packages.tuning.resources.cpuRequest'],
  ],
  [
    'a cpuLimit below its cpuRequest',
    withPackage({ resources: { cpuRequest: '2', cpuLimit: '500m', memoryRequest: '1Mi', memoryLimit: '1Mi' } }),
    ['spec.packages[tuning].resources.cpuLimit', 'cpuLimit is below cpuRequest; raise the limit or lower the request'],
  ],
  [
    'a memoryLimit below its memoryRequest in other units (1Gi < 2G)',
    withPackage({ resources: { cpuRequest: '1', cpuLimit: '1', memoryRequest: '2G', memoryLimit: '1Gi' } }),
    ['spec.packages[tuning].resources.memoryLimit', 'memoryLimit is below memoryRequest'],
  ],
  [
    'an integer cpuRequest above a string cpuLimit',
    withPackage({ resources: { cpuRequest: 2, cpuLimit: '1500m', memoryRequest: '1Mi', memoryLimit: '1Mi' } }),
    ['spec.packages[tuning].resources.cpuLimit', 'cpuLimit is below cpuRequest'],
  ],
  [
    'a resource quantity longer than 64 characters',
    withPackage({
      resources: { cpuRequest: '1', cpuLimit: `1${'0'.repeat(64)}`, memoryRequest: '1Mi', memoryLimit: '1Mi' },
    }),
    ['spec.packages.tuning.resources.cpuLimit', 'may not be more than 64'],
  ],
  [
    'a package pull secret name that is not a DNS-1123 name',
    withPackage({ imagePullSecrets: [{ name: 'Team_A' }] }),
    ['spec.packages.tuning.imagePullSecrets[0].name', 'should match'],
  ],
  [
    'a package pull secret named twice',
    withPackage({ imagePullSecrets: [{ name: 'team-a' }, { name: 'team-a' }] }),
    ['imagePullSecrets[1]', 'Duplicate value'],
  ],
  [
    'a configInterrupts key that is not a configMap key',
    withPackage({ configInterrupts: { 'missing.sh': { type: 'reboot' } } }),
    ['spec.packages[tuning].configInterrupts', 'must be a key of configMap'],
  ],
  [
    'dependsOn naming a missing package',
    withPackage({ dependsOn: { ghost: '1.0.0' } }),
    ['spec.packages', 'dependsOn must name packages of this Skyhook'],
  ],
  [
    'dependsOn naming another version',
    withPackage({ dependsOn: { base: '2.0.0' } }, { base: basePackage() }),
    ['spec.packages', 'dependsOn must name packages of this Skyhook at their exact version'],
  ],
  [
    'an interrupt type outside the enum',
    withPackage({ interrupt: { type: 'shutdown' } }),
    ['spec.packages.tuning.interrupt.type', 'Unsupported value'],
  ],
  [
    'a configInterrupt type outside the enum',
    withPackage({ configInterrupts: { 'apply.sh': { type: 'poweroff' } } }),
    ['spec.packages.tuning.configInterrupts.apply.sh.type', 'Unsupported value'],
  ],
  ['priority 0', skyhook({ priority: 0 }), ['spec.priority']],
  ['sequencing outside the enum', skyhook({ sequencing: 'cluster' }), ['spec.sequencing', 'Unsupported value']],
  [
    'a negative stageTimeout',
    withPackage({ stageTimeout: '-5m' }),
    ['spec.packages.tuning.stageTimeout', 'should match'],
  ],
  [
    'a drain timeout that is no duration',
    skyhook({ drainConfig: { timeout: 'soon' } }),
    ['spec.drainConfig.timeout', 'should match'],
  ],
  [
    'a selector In without values',
    skyhook({ nodeSelectors: { matchExpressions: [{ key: 'pool', operator: 'In' }] } }),
    ['spec.nodeSelectors.matchExpressions[0].values', 'values must be non-empty'],
  ],
  ['an unknown field', withPackage({ imagee: 'x' }), ['unknown field', 'imagee']],
  // DeploymentPolicy
  [
    'a budget with percent and count',
    policy({ default: { budget: { percent: 10, count: 1 }, strategy: { fixed: {} } } }),
    ['spec.default.budget', 'exactly one of percent or count'],
  ],
  [
    'a budget with neither percent nor count',
    policy({ default: { budget: {}, strategy: { fixed: {} } } }),
    ['spec.default.budget', 'exactly one of percent or count'],
  ],
  [
    'two strategies',
    policy({ default: { budget: { count: 1 }, strategy: { fixed: {}, linear: {} } } }),
    ['spec.default.strategy', 'exactly one of fixed, linear or exponential'],
  ],
  [
    'no strategy',
    policy({ default: { budget: { count: 1 }, strategy: {} } }),
    ['spec.default.strategy', 'exactly one of fixed, linear or exponential'],
  ],
  [
    'duplicate compartment names',
    policy({ compartments: [compartment('a'), compartment('a', { pool: 'b' })] }),
    ['spec.compartments[1]', 'Duplicate value'],
  ],
  [
    'the reserved compartment name',
    policy({ compartments: [compartment('__default__')] }),
    ['spec.compartments[0].name', '__default__ is reserved'],
  ],
  [
    'two compartments with the same selector',
    policy({ compartments: [compartment('a', { pool: 'x' }), compartment('b', { pool: 'x' })] }),
    ['spec.compartments', 'same selector'],
  ],
  [
    'batchThreshold 0',
    policy({ default: { budget: { count: 1 }, strategy: { fixed: { batchThreshold: 0 } } } }),
    ['spec.default.strategy.fixed.batchThreshold'],
  ],
  [
    'growthFactor 1',
    policy({ default: { budget: { count: 1 }, strategy: { exponential: { growthFactor: 1 } } } }),
    ['spec.default.strategy.exponential.growthFactor'],
  ],
  [
    'a percent budget of 0',
    policy({ compartments: [{ ...compartment('a'), budget: { percent: 0 } }] }),
    ['spec.compartments[0].budget.percent'],
  ],
  [
    'a maintenance window of both forms',
    policy({ maintenanceWindows: [{ start: '22:00', end: '04:00', schedule: '0 2 * * *', duration: '4h' }] }),
    ['spec.maintenanceWindows[0]', 'exactly one form'],
  ],
  [
    'a maintenance window of neither form',
    policy({ maintenanceWindows: [{ timeZone: 'UTC' }] }),
    ['spec.maintenanceWindows[0]', 'exactly one form'],
  ],
  [
    'a maintenance window start without end',
    policy({ maintenanceWindows: [{ start: '22:00' }] }),
    ['spec.maintenanceWindows[0]', 'start and end: set both'],
  ],
  [
    'a maintenance window schedule without duration',
    policy({ maintenanceWindows: [{ schedule: '0 2 * * *' }] }),
    ['spec.maintenanceWindows[0]', 'schedule and duration: set both'],
  ],
  [
    'a maintenance window duration of zero',
    policy({ maintenanceWindows: [{ schedule: '0 2 * * *', duration: '0s' }] }),
    ['spec.maintenanceWindows[0]', 'duration: must be above zero'],
  ],
  [
    'a maintenance window start that is no time',
    policy({ maintenanceWindows: [{ start: '25:00', end: '04:00' }] }),
    ['spec.maintenanceWindows[0].start', 'should match'],
  ],
  [
    'a maintenance window day that is no day',
    policy({ maintenanceWindows: [{ days: ['mo', 'funday'], start: '22:00', end: '04:00' }] }),
    ['spec.maintenanceWindows[0].days[1]', 'should match'],
  ],
  [
    'a maintenance window schedule of six fields',
    policy({ maintenanceWindows: [{ schedule: '0 0 2 * * *', duration: '4h' }] }),
    ['spec.maintenanceWindows[0].schedule', 'should match'],
  ],
  // DisruptionBudget
  [
    'a DisruptionBudget with count and percent',
    disruptionBudget({ maxDisrupted: { count: 1, percent: 10 } }),
    ['spec.maxDisrupted', 'set exactly one of count or percent'],
  ],
  [
    'a DisruptionBudget with neither count nor percent',
    disruptionBudget({ maxDisrupted: {} }),
    ['spec.maxDisrupted', 'set exactly one of count or percent'],
  ],
  ['a DisruptionBudget without maxDisrupted', disruptionBudget({}), ['spec.maxDisrupted', 'Required value']],
  ['a DisruptionBudget count of 0', disruptionBudget({ maxDisrupted: { count: 0 } }), ['spec.maxDisrupted.count']],
  [
    'a DisruptionBudget selector In without values',
    disruptionBudget({
      nodeSelector: { matchExpressions: [{ key: 'gpu', operator: 'In' }] },
      maxDisrupted: { count: 1 },
    }),
    ['spec.nodeSelector.matchExpressions[0].values', 'values must be non-empty'],
  ],
  [
    'a DisruptionBudget maintenance window of both forms',
    disruptionBudget({
      maxDisrupted: { count: 1 },
      maintenanceWindows: [{ start: '22:00', end: '04:00', schedule: '0 2 * * *', duration: '4h' }],
    }),
    ['spec.maintenanceWindows[0]', 'exactly one form'],
  ],
  // PackageTrustPolicy
  [
    'a PackageTrustPolicy with two keys of one name',
    trustPolicy({
      keys: [
        { name: 'release', publicKey: TRUSTED_KEY },
        { name: 'release', publicKey: TRUSTED_KEY },
      ],
    }),
    ['spec.keys', 'key names must be unique'],
  ],
  [
    'a PackageTrustPolicy image entry naming a key it does not have',
    trustPolicy({ images: [{ prefix: 'ghcr.io/nvidia/', keys: ['release', 'nightly'] }] }),
    ['spec.images', 'every images[].keys entry must name a key of spec.keys'],
  ],
  [
    'a PackageTrustPolicy with one prefix twice',
    trustPolicy({
      images: [
        { prefix: 'ghcr.io/nvidia/', keys: ['release'] },
        { prefix: 'ghcr.io/nvidia/', keys: ['release'] },
      ],
    }),
    ['spec.images', 'prefixes must be unique'],
  ],
  [
    'a PackageTrustPolicy key that is not a PEM public key',
    trustPolicy({ keys: [{ name: 'release', publicKey: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE' }] }),
    ['spec.keys[0].publicKey', 'should match'],
  ],
  ['a PackageTrustPolicy mode Audit', trustPolicy({ mode: 'Audit' }), ['spec.mode', 'Unsupported value']],
  // NodeOp
  ['a NodeOp without command', nodeOp({ command: undefined }), ['spec.command', 'Required value']],
  [
    'nodeSelector and targetNodes',
    nodeOp({ nodeSelector: { matchLabels: { a: 'b' } }, targetNodes: ['node-0'] }),
    ['spec.targetNodes', 'mutually exclusive'],
  ],
  ['drain without cordon', nodeOp({ drainOptions: { enabled: true } }), ['spec.drainOptions', 'requires cordon']],
  ['negative concurrency', nodeOp({ concurrency: -1 }), ['spec.concurrency']],
  ['duplicate targetNodes', nodeOp({ targetNodes: ['node-0', 'node-0'] }), ['spec.targetNodes[1]', 'Duplicate value']],
  [
    'a skyhookStage on two nodes',
    nodeOp({ targetNodes: ['node-0', 'node-1'], skyhookStage: stageOf('apply') }),
    ['spec.targetNodes', 'exactly one node'],
  ],
  [
    'an interrupt stage without interrupt',
    nodeOp({ targetNodes: ['node-0'], skyhookStage: stageOf('interrupt') }),
    ['spec.interrupt', 'required for the interrupt stages'],
  ],
  ['a relative hostMountPath', nodeOp({ hostMountPath: 'host' }), ['spec.hostMountPath', 'should match']],
  [
    'a NodeOp preflight (not run by the operator)',
    nodeOp({ preflight: { command: ['true'] } }),
    ['spec.preflight', 'preflight is not run by the operator: put the check first in initSteps'],
  ],
  [
    'spec.pause: true (upstream ignores it; the annotation pauses)',
    skyhook({ pause: true }),
    ['spec.pause', 'pause a Skyhook with the skyhook.nvidia.com/pause annotation'],
  ],
  [
    'a NodeOp memoryLimit below its memoryRequest',
    nodeOp({ resources: { cpuRequest: '1', cpuLimit: '1', memoryRequest: '2Gi', memoryLimit: '1Gi' } }),
    ['spec.resources.memoryLimit', 'memoryLimit is below memoryRequest'],
  ],
  [
    'a NodeOp pull secret with an empty name',
    nodeOp({ imagePullSecrets: [{ name: '' }] }),
    ['spec.imagePullSecrets[0].name', 'should be at least 1 chars long'],
  ],
  [
    'a NodeOp pull secret name that is not a DNS-1123 name',
    nodeOp({ imagePullSecrets: [{ name: 'regcred/../x' }] }),
    ['spec.imagePullSecrets[0].name', 'should match'],
  ],
  [
    'duplicate init step names',
    nodeOp({ initSteps: [{ name: 'copy' }, { name: 'copy' }] }),
    ['spec.initSteps[1]', 'Duplicate value'],
  ],
];

describe('invalid documents are refused by the API server with a message naming the field', () => {
  // Each refusal below must come from the one change its case makes: the bases it changes are accepted.
  it.each([
    ['a Skyhook', skyhook({})],
    ['a DeploymentPolicy', policy({})],
    ['a DisruptionBudget', disruptionBudget({ maxDisrupted: { count: 1 } })],
    ['a PackageTrustPolicy', trustPolicy({})],
  ])('accepts the unchanged base of %s', async (_what, doc) => {
    const result = await cp.kubectl(['create', '--dry-run=server', '-f', '-'], { input: stringify(doc) });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it.each(invalidDocuments)('%s', async (_what, doc, expected) => {
    const result = await cp.kubectl(['create', '--dry-run=server', '-f', '-'], { input: stringify(doc) });
    expect(result.code).not.toBe(0);
    for (const text of expected) expect(result.stderr).toContain(text);
  });
});

describe('printer columns', () => {
  it("kubectl get skyhooks shows upstream's columns, filled from the status", async () => {
    await kubectl([
      'patch',
      'skyhook',
      'demo',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: { status: 'in_progress', nodesInProgress: 1, completeNodes: '2/3', packageList: 'motd:1.1.0' },
      }),
    ]);
    const [header, row] = (await kubectl(['get', 'skyhook', 'demo'])).trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual([
      'NAME',
      'STATUS',
      'PRIORITY',
      'AGE',
      'NODES IN-PROGRESS',
      'COMPLETE NODES',
      'PACKAGES',
      'POLICY',
    ]);
    expect(row).toMatch(/^demo\s+in_progress\s+200\s+\S+\s+1\s+2\/3\s+motd:1\.1\.0\s*$/);
  });

  it('accepts a stage NodeOp as skyhook-ts 0.1.0 wrote it (interrupt and ConfigMaps under skyhookStage)', async () => {
    const legacy = nodeOp({
      targetNodes: ['node-0'],
      skyhookStage: { ...stageOf('interrupt'), interrupt: { type: 'reboot' }, configMap: 'demo-tuning-1.0.0' },
    });
    await kubectl(
      ['apply', '--server-side', '-f', '-'],
      stringify({ ...legacy, metadata: { name: 'legacy-stage', namespace: 'default' } }),
    );
    const stored = await getJson('nodeop', 'legacy-stage', 'default');
    expect(at(stored, 'spec', 'skyhookStage', 'interrupt')).toEqual({ type: 'reboot' });
    expect(at(stored, 'spec', 'skyhookStage', 'configMap')).toBe('demo-tuning-1.0.0');
    await kubectl(['delete', 'nodeop', 'legacy-stage', '-n', 'default', '--wait=false']);
  });

  it('kubectl get disruptionbudgets shows Max, Disrupted and Waiting, filled from the status', async () => {
    await kubectl(['apply', '--server-side', '-f', join(REPO_ROOT, 'config/samples/disruption-budget.yaml')]);
    await kubectl([
      'patch',
      'disruptionbudget',
      'gpu-nodes',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { maxDisrupted: 1, disruptedCount: 1, waitingCount: 2, matched: 8 } }),
    ]);
    const [header, row] = (await kubectl(['get', 'disruptionbudget', 'gpu-nodes'])).trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'MAX', 'DISRUPTED', 'WAITING', 'AGE']);
    expect(row).toMatch(/^gpu-nodes\s+1\s+1\s+2\s+\S+\s*$/);
  });

  it('kubectl get nodeops shows the NodeOp columns', async () => {
    const op = nodeOp({ targetNodes: ['node-0'], skyhookStage: stageOf('apply') });
    await kubectl(
      ['apply', '--server-side', '-f', '-'],
      stringify({ ...op, metadata: { name: 'demo-tuning-apply', namespace: 'default' } }),
    );
    await kubectl([
      'patch',
      'nodeop',
      'demo-tuning-apply',
      '-n',
      'default',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          phase: 'Running',
          nodeStatuses: { 'node-0': { phase: 'Running', jobName: 'j', rebootStatus: 'not-requested' } },
        },
      }),
    ]);
    const [header, row] = (await kubectl(['get', 'nodeops', '-n', 'default'])).trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'PHASE', 'SKYHOOK', 'PACKAGE', 'VERSION', 'STAGE', 'AGE']);
    expect(row).toMatch(/^demo-tuning-apply\s+Running\s+demo\s+tuning\s+1\.1\.0\s+apply\s+\S+$/);
    const wide = (await kubectl(['get', 'nodeops', '-n', 'default', '-o', 'wide'])).split('\n')[0]!;
    expect(wide.split(/\s{2,}/).slice(-3)).toEqual(['NODES', 'IMAGE', 'AGE']);
  });
});

/** `kubectl auth can-i --list` rows as `resource[.group][/subresource]` (or non-resource URL) → verbs. */
async function permissionsOf(serviceAccount: string): Promise<Map<string, string>> {
  const out = await kubectl([
    'auth',
    'can-i',
    '--list',
    `--as=system:serviceaccount:${OPERATOR_NAMESPACE}:${serviceAccount}`,
    '-n',
    OPERATOR_NAMESPACE,
  ]);
  const rows = new Map<string, string>();
  for (const line of out.split('\n').slice(1)) {
    const match = /^(\S*)\s+\[(.*?)\]\s+\[(.*?)\]\s+\[(.*)\]\s*$/.exec(line);
    if (!match) continue;
    const [, resource, urls, names, verbs] = match;
    const key = [resource || urls, names ? `(${names!})` : ''].join('');
    rows.set(key!, verbs!.split(' ').sort().join(' '));
  }
  return rows;
}

function canIKey(permission: Permission): string {
  const [resource, subresource] = permission.resource.split('/');
  const group = permission.apiGroup === '' ? '' : `.${permission.apiGroup}`;
  return `${resource!}${group}${subresource === undefined ? '' : `/${subresource}`}`;
}

describe('operator permissions', () => {
  it('are exactly the pinned list, without wildcards', async () => {
    const granted = await permissionsOf(OPERATOR_SERVICE_ACCOUNT);
    // What every authenticated user may do (discovery, self reviews) is not the operator's doing.
    const baseline = await permissionsOf('nobody-at-all');
    const own = [...granted].filter(([key, verbs]) => baseline.get(key) !== verbs);
    const expected = [...OPERATOR_CLUSTER_PERMISSIONS, ...OPERATOR_NAMESPACE_PERMISSIONS].map(
      (p) => [canIKey(p), [...p.verbs].sort().join(' ')] as [string, string],
    );
    expect(own.sort()).toEqual(expected.sort());
    expect(own.filter(([key, verbs]) => key.includes('*') || verbs.includes('*'))).toEqual([]);
  });
});
