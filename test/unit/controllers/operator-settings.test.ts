/**
 * Every operator setting (chart values `settings`, the operator's environment) reaches what it says:
 * read into the settings and carried into the objects the operator builds. The field audit
 * (docs/reference/field-audit.md) names this test for the settings without a test of their own.
 */
import { describe, expect, it } from '@jest/globals';
import type { Skyhook } from '../../../src/api/skyhook.js';
import { operatorVersion } from '../../../src/api/operator-version.js';
import { buildStageNodeOp } from '../../../src/controllers/skyhook/build/stage-nodeop.js';
import { readSkyhookSettings } from '../../../src/controllers/skyhook/skyhook-settings.js';
import { node, pkg, plan, scr, world } from './skyhook/plan/world.js';
import { planNextActions } from '../../../src/controllers/skyhook/plan/planner.js';
import { plannerInput } from './skyhook/plan/world.js';
import { buildNodeJob } from '../../../src/templates/nodeop-job.js';
import { readNodeOpSettings, readNodeOpWorkers } from '../../../src/templates/nodeop-settings.js';
import type { NodeOp } from '../../../src/api/nodeop.js';

const skyhook: Skyhook = {
  apiVersion: 'skyhook.nvidia.com/v1alpha1',
  kind: 'Skyhook',
  metadata: { name: 'demo', uid: 'u', generation: 1 },
  spec: { packages: { tuning: { version: '1.0.0', image: 'ghcr.io/x/tuning' } } },
};
const op = {
  kind: 'createStageOp' as const,
  skyhook: 'demo',
  node: 'n0',
  stage: 'apply' as const,
  previousRestarts: 0,
  package: { name: 'tuning', version: '1.0.0', image: 'ghcr.io/x/tuning' },
};

describe('Skyhook controller settings', () => {
  const settings = readSkyhookSettings(
    {
      AGENT_IMAGE: 'registry.example/agent:9',
      COPY_DIR_ROOT: '/opt/copies',
      AGENT_LOG_ROOT: '/opt/logs',
      IMAGE_PULL_SECRET: 'regcred',
      JOB_BACKOFF_LIMIT: '7',
      RUNTIME_REQUIRED_TAINT: 'gpu.example=not-ready:NoExecute',
      JOB_STAGE_TIMEOUT: '90s',
      OPERATOR_VERSION: '9.9.9',
    },
    'skyhook',
  );
  const spec = buildStageNodeOp({ op, skyhook, settings }).spec;

  it('AGENT_IMAGE, COPY_DIR_ROOT and AGENT_LOG_ROOT shape the agent steps of every stage', () => {
    const agent = spec.initSteps?.find((step) => step.name === 'tuning-apply');
    expect(agent?.image).toBe('registry.example/agent:9');
    expect(agent?.command?.at(-1)).toMatch(/^\/opt\/copies\/demo\/tuning-1\.0\.0-u-1$/);
    expect(agent?.env).toEqual(expect.arrayContaining([{ name: 'SKYHOOK_LOG_DIR', value: '/opt/logs/demo' }]));
  });

  it('IMAGE_PULL_SECRET, JOB_BACKOFF_LIMIT and RUNTIME_REQUIRED_TAINT reach the stage Job', () => {
    expect(spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(spec.backoffLimit).toBe(7);
    expect(spec.tolerations?.[0]).toEqual({
      key: 'gpu.example',
      operator: 'Equal',
      value: 'not-ready',
      effect: 'NoExecute',
    });
  });

  it('JOB_STAGE_TIMEOUT is the deadline of a stage whose package sets none', () => {
    const w = world([scr('s', { packages: { a: pkg('1.0.0') } })], [node('n0', 0)]);
    const actions = planNextActions({
      ...plannerInput(w),
      settings: { defaultStageTimeoutSeconds: settings.defaultStageTimeoutSeconds },
    }).actions;
    const created = actions.find((a) => a.kind === 'createStageOp');
    expect(settings.defaultStageTimeoutSeconds).toBe(90);
    expect(created).toMatchObject({ stageTimeoutSeconds: 90 });
    expect(plan(w).actions.find((a) => a.kind === 'createStageOp')).toMatchObject({ stageTimeoutSeconds: 3600 });
  });

  it('OPERATOR_VERSION is the version the operator stamps', () => {
    expect(settings.operatorVersion).toBe('v9.9.9');
    expect(operatorVersion({ OPERATOR_VERSION: 'v1.2.3' })).toBe('v1.2.3');
  });
});

describe('NodeOp controller settings', () => {
  const nodeOp: NodeOp = {
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'NodeOp',
    metadata: { name: 'op', namespace: 'ns', uid: 'u' },
    spec: { command: ['true'], rebootOnSuccess: true },
  };

  it('NODEOP_DEFAULT_IMAGE, SENTINEL_IMAGE and JOB_TTL_SUCCEEDED shape the Job of a NodeOp without an image', () => {
    const settings = readNodeOpSettings({
      NODEOP_DEFAULT_IMAGE: 'registry.example/tools:1',
      SENTINEL_IMAGE: 'registry.example/helper:2',
      JOB_TTL_SUCCEEDED: '10m',
    });
    const job = buildNodeJob({ nodeOp, node: 'n0', jobName: 'j', settings, writesSentinel: true });
    const images = [
      ...(job.spec?.template.spec?.initContainers ?? []),
      ...(job.spec?.template.spec?.containers ?? []),
    ].map((c) => c.image);
    expect(images).toEqual(['registry.example/tools:1', 'registry.example/helper:2']);
    expect(job.spec?.ttlSecondsAfterFinished).toBe(600);
  });

  it('NODEOP_STUCK_POD_TIMEOUT_SECONDS, NODEOP_REBOOT_TIMEOUT_SECONDS and NODEOP_WORKERS are read as given', () => {
    const settings = readNodeOpSettings({ NODEOP_STUCK_POD_TIMEOUT_SECONDS: '5', NODEOP_REBOOT_TIMEOUT_SECONDS: '7' });
    expect([settings.stuckPodTimeoutMs, settings.rebootTimeoutMs]).toEqual([5000, 7000]);
    expect(readNodeOpWorkers({ NODEOP_WORKERS: '3' })).toBe(3);
  });
});
