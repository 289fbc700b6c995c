/**
 * A stage NodeOp created by skyhook-ts 0.1.0 (interrupt and ConfigMaps under spec.skyhookStage, no
 * generic fields) is read by both controllers as the current Skyhook controller would have built it,
 * so an upgrade in the middle of a rollout neither skips a reboot nor loses a stage's mounts.
 */
import { describe, expect, it } from '@jest/globals';
import type { NodeOp } from '../../../src/api/nodeop.js';
import type { Skyhook } from '../../../src/api/skyhook.js';
import { cachedNodeOp } from '../../../src/controllers/cached-nodeops.js';
import { buildStageNodeOp } from '../../../src/controllers/skyhook/build/stage-nodeop.js';
import { readSkyhookSettings } from '../../../src/controllers/skyhook/skyhook-settings.js';
import { upgradeLegacyStageFields } from '../../../src/templates/legacy-stage-fields.js';
import { stageOp, tuningSkyhook } from '../../fixtures/stage-op.js';

const settings = readSkyhookSettings({}, 'skyhook');
const skyhook: Skyhook = tuningSkyhook();

/** The same op as 0.1.0 wrote it: the stage's fields under skyhookStage, none of the generic ones. */
function asWrittenBy010(current: NodeOp): NodeOp {
  const { interrupt, configMapMounts, hostNetwork, eventVerbosity, childLabels, drainOptions, ...spec } = current.spec;
  const mount = (name: string) => configMapMounts?.find((m) => m.name === name)?.configMap;
  const packageConfig = mount('package-config');
  const nodeMetadata = mount('node-metadata');
  const legacyDrain = drainOptions
    ? (({ exemptNamespaces: _n, exemptCordonTolerating: _c, ...rest }) => rest)(drainOptions)
    : undefined;
  return {
    ...current,
    spec: {
      ...spec,
      ...(legacyDrain ? { drainOptions: legacyDrain } : {}),
      skyhookStage: {
        ...current.spec.skyhookStage!,
        ...(interrupt ? { interrupt } : {}),
        ...(packageConfig ? { configMap: packageConfig } : {}),
        ...(nodeMetadata ? { nodeMetadataConfigMap: nodeMetadata } : {}),
      },
    },
  };
}

describe('a stage NodeOp written by skyhook-ts 0.1.0', () => {
  it('reads as the current build of the same interrupt stage (interrupt, drain exemptions, labels, quiet)', () => {
    const current = buildStageNodeOp({
      op: stageOp({
        stage: 'interrupt',
        interrupt: { type: 'reboot' },
        cordon: true,
        drain: { enabled: true, force: true },
      }),
      skyhook,
      settings,
    });
    expect(current.spec.drainOptions?.exemptNamespaces).toEqual(['kube-system']);
    const legacy = asWrittenBy010(current);
    expect(legacy.spec.interrupt).toBeUndefined();
    expect(legacy.spec.drainOptions?.exemptNamespaces).toBeUndefined();
    expect(upgradeLegacyStageFields(legacy)).toEqual(current);
  });

  it('reads as the current build of the same config stage (both ConfigMap mounts, host network)', () => {
    const current = buildStageNodeOp({ op: stageOp({ configMap: 'demo-tuning-1.0.0' }), skyhook, settings });
    const legacy = asWrittenBy010(current);
    expect(legacy.spec.configMapMounts).toBeUndefined();
    expect(upgradeLegacyStageFields(legacy)).toEqual(current);
  });

  it('leaves a current stage op and a plain NodeOp as they are', () => {
    const current = buildStageNodeOp({ op: stageOp({}), skyhook, settings });
    expect(upgradeLegacyStageFields(current)).toBe(current);
    const { skyhookStage: _s, hostNetwork: _h, eventVerbosity: _e, ...plain } = current.spec;
    const plainOp: NodeOp = { ...current, spec: plain };
    expect(upgradeLegacyStageFields(plainOp)).toBe(plainOp);
  });

  const rebootStage = (): NodeOp =>
    buildStageNodeOp({ op: stageOp({ stage: 'interrupt', interrupt: { type: 'reboot' } }), skyhook, settings });

  it('is what both controllers cache (managedFields dropped too)', () => {
    const legacy = asWrittenBy010(rebootStage());
    const cached = cachedNodeOp({ ...legacy, metadata: { ...legacy.metadata, managedFields: [{ manager: 'x' }] } });
    expect(cached.metadata.managedFields).toBeUndefined();
    expect(cached.spec.interrupt).toEqual({ type: 'reboot' });
  });

  it('keeps its interrupt once it finished (a failed node still has its reboot pod deleted)', () => {
    const current = rebootStage();
    const legacy = asWrittenBy010(current);
    const cached = cachedNodeOp({
      ...legacy,
      status: { phase: 'Failed', nodeStatuses: { n0: { phase: 'Failed', rebootStatus: 'cancelled' } } },
    });
    expect(cached.spec.interrupt).toEqual({ type: 'reboot' });
    expect(cached.spec.skyhookStage).toEqual(current.spec.skyhookStage);
    // Read after the upgrade, then trimmed as any finished NodeOp: no mounts to build a Job with.
    expect(cached.spec.configMapMounts).toBeUndefined();
  });
});
