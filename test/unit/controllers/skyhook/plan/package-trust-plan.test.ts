/**
 * The planner with the PackageTrustPolicies' decisions as input: stage ops pinned to the verified
 * digest (and the Job's package container running `repo@sha256:…`, never the tag), an Enforce
 * refusal blocking the Skyhook (no op, the PackageTrustRefused condition and hold naming package,
 * image and reason), Warn running, and the checker asked once for a package on many nodes.
 */
import { describe, expect, it } from '@jest/globals';
import { nodeAnnotations } from '../../../../../src/api/names.js';
import type { Skyhook } from '../../../../../src/api/skyhook.js';
import { buildStageNodeOp } from '../../../../../src/controllers/skyhook/build/stage-nodeop.js';
import type {
  PackageTrustDecision,
  PackageTrustResults,
} from '../../../../../src/controllers/skyhook/plan/package-trust.js';
import type { CreateStageOp, SetSkyhookStatus } from '../../../../../src/controllers/skyhook/plan/planner-types.js';
import { readSkyhookSettings } from '../../../../../src/controllers/skyhook/skyhook-settings.js';
import { trustNoticeEvent } from '../../../../../src/controllers/skyhook/trust-input.js';
import { PackageTrustChecker } from '../../../../../src/controllers/trust/package-trust.js';
import type { VerifyImageSignature } from '../../../../../src/signing/verdict.js';
import { buildNodeJob } from '../../../../../src/templates/nodeop-job.js';
import { readNodeOpSettings } from '../../../../../src/templates/nodeop-settings.js';
import { DIGEST, policyFor } from '../../trust/trust-fixtures.js';
import { applyActions, node, pkg, plannerInput, scr, world, type World } from './world.js';
import { planNextActions } from '../../../../../src/controllers/skyhook/plan/planner.js';

const IMAGE = 'ghcr.io/nvidia/tuning';
const verified: PackageTrustDecision = {
  kind: 'verified',
  image: `${IMAGE}:1.0.0`,
  digest: DIGEST,
  signedBy: ['trusted/a'],
};
const refused = (
  mode: 'Enforce' | 'Warn',
  reason: 'Unsigned' | 'DigestMismatch' = 'Unsigned',
): PackageTrustDecision => ({
  kind: 'refused',
  image: `${IMAGE}:1.0.0`,
  mode,
  reason,
  policy: 'trusted',
  digest: DIGEST,
  message: `${IMAGE}:1.0.0 has no signature; sign it with cosign sign --key`,
});

const demo = (): Skyhook =>
  scr('demo', {
    packages: {
      tuning: pkg('1.0.0', { image: IMAGE }),
      other: pkg('2.0.0', { image: 'docker.io/library/other' }),
    },
  });
const nodes = (count: number) => Array.from({ length: count }, (_, i) => node(`n${i}`, i));

function planWith(w: World, packageTrust: PackageTrustResults) {
  return planNextActions({ ...plannerInput(w), packageTrust });
}
const createsOf = (actions: { kind: string }[]): CreateStageOp[] =>
  actions.filter((a): a is CreateStageOp => a.kind === 'createStageOp');
const statusOf = (actions: { kind: string }[]) =>
  actions.find((a): a is SetSkyhookStatus => a.kind === 'setSkyhookStatus')?.status;

function packageContainerImage(op: CreateStageOp, skyhook: Skyhook): string | undefined {
  const nodeOp = buildStageNodeOp({
    op,
    skyhook: { ...skyhook, metadata: { ...skyhook.metadata, uid: 'u' } },
    settings: readSkyhookSettings({}, 'skyhook'),
  });
  const job = buildNodeJob({
    nodeOp: { ...nodeOp, metadata: { ...nodeOp.metadata, uid: 'uid-1' } },
    node: op.node,
    jobName: 'j-1',
    settings: readNodeOpSettings({}),
    writesSentinel: false,
    suspend: false,
  });
  return job.spec?.template.spec?.initContainers?.find((c) => c.name === `${op.package.name}-init`)?.image;
}

describe('the planner under a PackageTrustPolicy', () => {
  it('pins every stage op of a verified package to its digest, and the Job runs repo@digest, not the tag', () => {
    const w = world([demo()], nodes(3));
    const creates = createsOf(planWith(w, { demo: { 'tuning|1.0.0': verified } }).actions);
    const tuning = creates.filter((op) => op.package.name === 'tuning');
    expect(tuning).toHaveLength(3);
    for (const op of tuning) {
      expect(op.pinnedDigest).toBe(DIGEST);
      expect(packageContainerImage(op, demo())).toBe(`${IMAGE}@${DIGEST}`);
    }
    // A package no policy covers runs by its tag, as before.
    const other = creates.find((op) => op.package.name === 'other')!;
    expect(other.pinnedDigest).toBeUndefined();
    expect(packageContainerImage(other, demo())).toBe('docker.io/library/other:2.0.0');
  });

  it('refused in Enforce mode: no stage op on any node, the condition and each node hold name package, image and why', () => {
    const w = world([demo()], nodes(3));
    const result = planWith(w, { demo: { 'tuning|1.0.0': refused('Enforce', 'DigestMismatch') } });
    expect(createsOf(result.actions)).toEqual([]);
    const condition = statusOf(result.actions)?.conditions?.find((c) => c.type === 'PackageTrustRefused');
    expect(condition?.status).toBe('True');
    expect(condition?.reason).toBe('DigestMismatch');
    expect(condition?.message).toContain(
      `package tuning:1.0.0 (image ${IMAGE}:1.0.0) refused by PackageTrustPolicy trusted`,
    );
    expect(statusOf(result.actions)?.status).toBe('blocked');
    applyActions(w, result.actions);
    for (const n of w.nodes)
      expect(n.annotations[nodeAnnotations.waiting('demo')]).toMatch(/^PackageTrustRefused: package tuning:1.0.0/);
  });

  // A Skyhook after it by priority waits on its nodes, as behind any Skyhook not complete there.
  it('leaves the Skyhooks before it by priority alone', () => {
    const w = world([demo(), scr('unrelated', { priority: 1, packages: { a: pkg('1.0.0') } })], nodes(2));
    const result = planWith(w, { demo: { 'tuning|1.0.0': refused('Enforce') } });
    const creates = createsOf(result.actions);
    expect(creates.filter((op) => op.skyhook === 'demo')).toEqual([]);
    expect(
      creates
        .filter((op) => op.skyhook === 'unrelated')
        .map((op) => op.node)
        .sort(),
    ).toEqual(['n0', 'n1']);
  });

  it('lifts the block once the image verifies: the condition goes and the stages start, pinned', () => {
    const w = world([demo()], nodes(1));
    applyActions(w, planWith(w, { demo: { 'tuning|1.0.0': refused('Enforce') } }).actions);
    const result = planWith(w, { demo: { 'tuning|1.0.0': verified } });
    expect(statusOf(result.actions)?.conditions?.some((c) => c.type === 'PackageTrustRefused')).toBe(false);
    expect(createsOf(result.actions).find((op) => op.package.name === 'tuning')?.pinnedDigest).toBe(DIGEST);
  });

  it('refused in Warn mode: runs, pinned to the digest the tag resolved to, with no condition', () => {
    const w = world([demo()], nodes(2));
    const result = planWith(w, { demo: { 'tuning|1.0.0': refused('Warn') } });
    const tuning = createsOf(result.actions).filter((op) => op.package.name === 'tuning');
    expect(tuning.map((op) => op.pinnedDigest)).toEqual([DIGEST, DIGEST]);
    expect(statusOf(result.actions)?.conditions?.some((c) => c.type === 'PackageTrustRefused')).toBe(false);
  });

  it('verifies a package once for 200 nodes, and every node runs the one verified digest', async () => {
    let calls = 0;
    const verify: VerifyImageSignature = async () => {
      calls++;
      return { kind: 'verified', digest: DIGEST, keyName: 'a' };
    };
    const trust = new PackageTrustChecker({
      verify,
      accessFor: async () => ({ credentialsFor: () => undefined }),
      operatorPullSecret: '',
      now: () => 0,
    });
    const w = world([demo()], nodes(200));
    const pinned = new Set<string | undefined>();
    for (let round = 0; round < 5; round++) {
      const run = await trust.decide(w.skyhooks, [policyFor('ghcr.io/nvidia/')]);
      const result = planWith(w, run.results);
      for (const op of createsOf(result.actions)) if (op.package.name === 'tuning') pinned.add(op.pinnedDigest);
      applyActions(w, result.actions);
      w.ops = w.ops.map((op) => (op.phase === 'Running' ? { ...op, phase: 'Completed', finishedAt: w.now } : op));
      w.now += 1000;
    }
    expect(w.created.filter((op) => op.package === 'tuning').length).toBeGreaterThanOrEqual(200);
    expect(calls).toBe(1);
    expect([...pinned]).toEqual([DIGEST]);
  });
});

describe('the Events of trust decisions', () => {
  const notice = (decision: PackageTrustDecision) => ({
    skyhook: 'demo',
    package: 'tuning',
    version: '1.0.0',
    decision,
  });

  it('Enforce refusal: a Warning naming the package, the image, the reason and the fix', () => {
    const event = trustNoticeEvent(notice(refused('Enforce')));
    expect(event.type).toBe('Warning');
    expect(event.reason).toBe('PackageTrustRefused');
    expect(event.message).toContain(
      `package tuning:1.0.0 (image ${IMAGE}:1.0.0) refused by PackageTrustPolicy trusted: Unsigned`,
    );
    expect(event.message).toContain('cosign sign --key');
    expect(event.message).toContain('No stage of this Skyhook starts');
  });

  it('Warn refusal: a Warning that says it runs anyway, pinned', () => {
    const event = trustNoticeEvent(notice(refused('Warn')));
    expect([event.type, event.reason]).toEqual(['Warning', 'PackageTrustWarning']);
    expect(event.message).toContain(`runs anyway (pinned to ${DIGEST})`);
  });

  it('verified: a Normal Event naming the key and the pinned reference', () => {
    const event = trustNoticeEvent(notice(verified));
    expect([event.type, event.reason]).toEqual(['Normal', 'PackageTrustVerified']);
    expect(event.message).toContain(`signed by trusted/a; its stages run ${IMAGE}@${DIGEST}`);
  });
});
