/** The stage NodeOp's images: the agent image of the operator unless the package overrides it. */
import { describe, expect, it } from '@jest/globals';
import type { Package, Skyhook } from '../../../../../src/api/skyhook.js';
import type { CreateStageOp } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { readSkyhookSettings } from '../../../../../src/controllers/skyhook/skyhook-settings.js';
import { buildStageNodeOp } from '../../../../../src/controllers/skyhook/build/stage-nodeop.js';

const settings = readSkyhookSettings({}, 'skyhook');
const op: CreateStageOp = {
  kind: 'createStageOp',
  skyhook: 'demo',
  node: 'n0',
  stage: 'apply',
  previousRestarts: 0,
  package: { name: 'tuning', version: '1.0.0', image: 'ghcr.io/x/tuning' },
};
const skyhookWith = (pkg: Partial<Package>): Skyhook => ({
  apiVersion: 'skyhook.nvidia.com/v1alpha1',
  kind: 'Skyhook',
  metadata: { name: 'demo', uid: 'u', generation: 1 },
  spec: { packages: { tuning: { version: '1.0.0', image: 'ghcr.io/x/tuning', ...pkg } } },
});
const agentImages = (skyhook: Skyhook): string[] =>
  (buildStageNodeOp({ op, skyhook, settings }).spec.initSteps ?? [])
    .filter((step) => step.command?.[0] === 'skyhook')
    .map((step) => step.image ?? '');

describe('agentImageOverride', () => {
  it('replaces the agent image when set', () => {
    expect(new Set(agentImages(skyhookWith({ agentImageOverride: 'ghcr.io/x/agent:9.9.9' })))).toEqual(
      new Set(['ghcr.io/x/agent:9.9.9']),
    );
  });

  it('is no override when empty, as upstream reads it (not an empty image the API server refuses)', () => {
    const images = agentImages(skyhookWith({ agentImageOverride: '' }));
    expect(images.length).toBeGreaterThan(0);
    expect(new Set(images)).toEqual(new Set([settings.agentImage]));
  });
});
