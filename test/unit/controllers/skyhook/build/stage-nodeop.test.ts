/** The stage NodeOp's images: the agent image of the operator unless the package overrides it. */
import { describe, expect, it } from '@jest/globals';
import type { Skyhook } from '../../../../../src/api/skyhook.js';
import { readSkyhookSettings } from '../../../../../src/controllers/skyhook/skyhook-settings.js';
import { buildStageNodeOp } from '../../../../../src/controllers/skyhook/build/stage-nodeop.js';
import { stageOp, tuningSkyhook } from '../../../../fixtures/stage-op.js';

const settings = readSkyhookSettings({}, 'skyhook');
const agentImages = (skyhook: Skyhook): string[] =>
  (buildStageNodeOp({ op: stageOp(), skyhook, settings }).spec.initSteps ?? [])
    .filter((step) => step.command?.[0] === 'skyhook')
    .map((step) => step.image ?? '');

describe('agentImageOverride', () => {
  it('replaces the agent image when set', () => {
    expect(new Set(agentImages(tuningSkyhook({ agentImageOverride: 'ghcr.io/x/agent:9.9.9' })))).toEqual(
      new Set(['ghcr.io/x/agent:9.9.9']),
    );
  });

  it('is no override when empty, as upstream reads it (not an empty image the API server refuses)', () => {
    const images = agentImages(tuningSkyhook({ agentImageOverride: '' }));
    expect(images.length).toBeGreaterThan(0);
    expect(new Set(images)).toEqual(new Set([settings.agentImage]));
  });
});
