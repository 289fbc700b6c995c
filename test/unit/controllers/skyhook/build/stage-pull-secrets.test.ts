/**
 * Pull secrets of a stage's Job: the operator-wide IMAGE_PULL_SECRET and the package's own
 * imagePullSecrets, each once, carried by the stage NodeOp into the Job's pod spec.
 */
import { describe, expect, it } from '@jest/globals';
import type { Package } from '../../../../../src/api/skyhook-package.js';
import { buildStageNodeOp } from '../../../../../src/controllers/skyhook/build/stage-nodeop.js';
import { readSkyhookSettings } from '../../../../../src/controllers/skyhook/skyhook-settings.js';
import { buildNodeJob } from '../../../../../src/templates/nodeop-job.js';
import { readNodeOpSettings } from '../../../../../src/templates/nodeop-settings.js';
import { stageOp, tuningSkyhook } from '../../../../fixtures/stage-op.js';

function stageJobPullSecrets(imagePullSecret: string, pkg: Partial<Package>): unknown {
  const settings = readSkyhookSettings(imagePullSecret ? { IMAGE_PULL_SECRET: imagePullSecret } : {}, 'skyhook');
  const nodeOp = buildStageNodeOp({ op: stageOp(), skyhook: tuningSkyhook(pkg), settings });
  const job = buildNodeJob({
    nodeOp: { ...nodeOp, metadata: { ...nodeOp.metadata, uid: 'uid-1' } },
    node: 'n0',
    jobName: 'j-1',
    settings: readNodeOpSettings({}),
    writesSentinel: false,
    suspend: false,
  });
  return job.spec?.template.spec?.imagePullSecrets;
}

describe("a stage Job's pull secrets", () => {
  it('has none when neither the operator nor the package names one', () => {
    expect(stageJobPullSecrets('', {})).toBeUndefined();
  });

  it('has the operator-wide IMAGE_PULL_SECRET alone when the package names none', () => {
    expect(stageJobPullSecrets('regcred', {})).toEqual([{ name: 'regcred' }]);
  });

  it("has the package's own secrets beside the operator-wide one, the operator's first", () => {
    expect(stageJobPullSecrets('regcred', { imagePullSecrets: [{ name: 'team-a' }, { name: 'team-b' }] })).toEqual([
      { name: 'regcred' },
      { name: 'team-a' },
      { name: 'team-b' },
    ]);
  });

  it("has the package's secrets alone without an operator-wide one, and names a shared one once", () => {
    expect(stageJobPullSecrets('', { imagePullSecrets: [{ name: 'team-a' }] })).toEqual([{ name: 'team-a' }]);
    expect(stageJobPullSecrets('regcred', { imagePullSecrets: [{ name: 'regcred' }] })).toEqual([{ name: 'regcred' }]);
  });
});
