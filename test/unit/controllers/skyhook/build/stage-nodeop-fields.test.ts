/**
 * What a Skyhook stage's NodeOp asks of the generic NodeOp controller: the fields that give it
 * upstream's stage pod (ConfigMap mounts, host network, drain exemptions, quiet events, the interrupt,
 * labels), with `skyhookStage` only recording which stage it is.
 */
import { describe, expect, it } from '@jest/globals';
import { CHILD_LABELS } from '../../../../../src/api/names.js';
import type { Skyhook } from '../../../../../src/api/skyhook.js';
import {
  buildStageNodeOp,
  NODE_METADATA_MOUNT,
  PACKAGE_CONFIGMAP_MOUNT,
} from '../../../../../src/controllers/skyhook/build/stage-nodeop.js';
import { readSkyhookSettings } from '../../../../../src/controllers/skyhook/skyhook-settings.js';
import { stageOp as op, tuningSkyhook } from '../../../../fixtures/stage-op.js';

const settings = readSkyhookSettings({}, 'skyhook');
const skyhook: Skyhook = tuningSkyhook();

describe('the stage NodeOp', () => {
  it('sets the generic fields and keeps skyhookStage as a record only', () => {
    const spec = buildStageNodeOp({ op: op({ configMap: 'demo-tuning-1.0.0' }), skyhook, settings }).spec;
    expect(spec.hostNetwork).toBe(true);
    expect(spec.eventVerbosity).toBe('Quiet');
    expect(spec.configMapMounts).toEqual([
      { name: 'package-config', configMap: 'demo-tuning-1.0.0', mountPath: PACKAGE_CONFIGMAP_MOUNT },
      { name: 'node-metadata', configMap: expect.stringMatching(/^demo-n0-metadata-/), mountPath: NODE_METADATA_MOUNT },
    ]);
    expect(spec.childLabels).toEqual({
      [CHILD_LABELS.name]: 'demo',
      [CHILD_LABELS.package]: 'tuning-1.0.0',
      [CHILD_LABELS.stage]: 'apply',
    });
    expect(spec.skyhookStage).toEqual({
      skyhook: 'demo',
      package: { name: 'tuning', version: '1.0.0', image: 'ghcr.io/x/tuning' },
      stage: 'apply',
    });
    expect(spec.interrupt).toBeUndefined();
    expect(spec.drainOptions).toBeUndefined();
  });

  it('carries the interrupt and drains with upstream exemptions', () => {
    const interrupt = buildStageNodeOp({
      op: op({ stage: 'interrupt', interrupt: { type: 'service', services: ['containerd'] } }),
      skyhook,
      settings,
    }).spec;
    expect(interrupt.interrupt).toEqual({ type: 'service', services: ['containerd'] });
    const drained = buildStageNodeOp({
      op: op({ cordon: true, drain: { enabled: true, force: true } }),
      skyhook,
      settings,
    }).spec;
    expect(drained.cordon).toBe(true);
    expect(drained.drainOptions).toEqual({
      enabled: true,
      force: true,
      exemptNamespaces: ['kube-system'],
      exemptCordonTolerating: true,
    });
  });

  it("gives the stage's pods the package's gracefulShutdown as their grace period, in whole seconds", () => {
    const graceful: Skyhook = {
      ...skyhook,
      spec: { packages: { tuning: { version: '1.0.0', image: 'ghcr.io/x/tuning', gracefulShutdown: '46.9s' } } },
    };
    expect(buildStageNodeOp({ op: op(), skyhook: graceful, settings }).spec.terminationGracePeriodSeconds).toBe(46);
    const interrupt = op({ stage: 'interrupt', interrupt: { type: 'reboot' } });
    expect(buildStageNodeOp({ op: interrupt, skyhook: graceful, settings }).spec.terminationGracePeriodSeconds).toBe(
      46,
    );
    expect(buildStageNodeOp({ op: op(), skyhook, settings }).spec.terminationGracePeriodSeconds).toBeUndefined();
  });

  it("gives the agent steps the package's env, and every stage container its resources", () => {
    const resources = { cpuRequest: '100m', cpuLimit: '1', memoryRequest: '64Mi', memoryLimit: '128Mi' };
    const withEnv: Skyhook = {
      ...skyhook,
      spec: {
        packages: {
          tuning: { version: '1.0.0', image: 'ghcr.io/x/tuning', env: [{ name: 'MODE', value: 'fast' }], resources },
        },
      },
    };
    const spec = buildStageNodeOp({ op: op(), skyhook: withEnv, settings }).spec;
    const [copy, apply, check] = spec.initSteps ?? [];
    for (const step of [apply, check]) expect(step?.env?.[0]).toEqual({ name: 'MODE', value: 'fast' });
    expect(copy?.env).not.toContainEqual({ name: 'MODE', value: 'fast' });
    for (const step of [copy, apply, check]) expect(step?.resources).toEqual(resources);
    expect(spec.resources).toEqual(resources);
  });
});
