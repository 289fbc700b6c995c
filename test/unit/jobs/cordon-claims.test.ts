/**
 * The one cordon model (src/jobs/cordon/): shared claims (`cordon_<scr>`, runtimeRequiredCordon) and a
 * NodeOp's exclusive claim (`cordoned-by`), their decisions on a node, and the exact merge patches the
 * writers send (the annotations upstream's tools and the e2e tests read).
 */
import { describe, expect, it } from '@jest/globals';
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import { NODEOP_NAMES, nodeAnnotations, RUNTIME_REQUIRED_CORDON_ANNOTATION } from '../../../src/api/names.js';
import {
  cordonAfterRelease,
  cordonClaim,
  cordonClaims,
  cordonOwner,
  decideCordon,
  decideRelease,
  isDisrupted,
  isForeignCordon,
  maintenanceClaim,
  nodeOpClaim,
  sharedClaim,
} from '../../../src/jobs/cordon/claims.js';
import { claimCordon, releaseCordon } from '../../../src/jobs/cordon/write.js';

const CORDONED_BY = NODEOP_NAMES.cordonedBy;
const A = cordonClaim('a');
const B = cordonClaim('b');
const OWNER = cordonOwner({ namespace: 'ops', name: 'upgrade', uid: 'u1' });
const view = (unschedulable: boolean, annotations: Record<string, string> = {}) => ({ unschedulable, annotations });

describe('claims', () => {
  it('names the claims as the annotations upstream reads', () => {
    expect(A).toBe(nodeAnnotations.cordon('a'));
    expect(OWNER).toBe('ops/upgrade@u1');
    expect(cordonClaims({ [B]: 'true', x: 'y', [RUNTIME_REQUIRED_CORDON_ANNOTATION]: 'true', [A]: 'true' })).toEqual(
      [A, B, RUNTIME_REQUIRED_CORDON_ANNOTATION].sort(),
    );
  });

  it('a cordon is foreign to shared claimers when nobody claimed it or a NodeOp holds it', () => {
    expect(isForeignCordon(view(false))).toBe(false);
    expect(isForeignCordon(view(true))).toBe(true);
    expect(isForeignCordon(view(true, { [B]: 'true' }))).toBe(false);
    expect(isForeignCordon(view(true, { [B]: 'true', [CORDONED_BY]: OWNER }))).toBe(true);
  });

  it('a shared claim cordons, joins other shared claims, and works under a foreign cordon', () => {
    expect(decideCordon(view(false), sharedClaim(A))).toEqual({
      outcome: 'cordoned',
      patch: { annotations: { [A]: 'true' }, unschedulable: true },
    });
    expect(decideCordon(view(true, { [B]: 'true' }), sharedClaim(A))).toEqual({
      outcome: 'joined',
      patch: { annotations: { [A]: 'true' }, unschedulable: true },
    });
    expect(decideCordon(view(true, { [A]: 'true' }), sharedClaim(A))).toEqual({ outcome: 'ours-already' });
    expect(decideCordon(view(true), sharedClaim(A))).toEqual({ outcome: 'cordoned-by-someone-else' });
    expect(decideCordon(view(true, { [CORDONED_BY]: OWNER }), sharedClaim(A))).toEqual({
      outcome: 'cordoned-by-someone-else',
    });
  });

  it("a NodeOp's claim cordons only a schedulable node and never joins", () => {
    expect(decideCordon(view(false), nodeOpClaim(OWNER))).toEqual({
      outcome: 'cordoned',
      patch: { annotations: { [CORDONED_BY]: OWNER }, unschedulable: true },
    });
    expect(decideCordon(view(true, { [CORDONED_BY]: OWNER }), nodeOpClaim(OWNER))).toEqual({ outcome: 'ours-already' });
    expect(decideCordon(view(true, { [A]: 'true' }), nodeOpClaim(OWNER))).toEqual({
      outcome: 'cordoned-by-someone-else',
    });
    expect(decideCordon(view(true, { [CORDONED_BY]: 'ops/upgrade@old' }), nodeOpClaim(OWNER))).toEqual({
      outcome: 'cordoned-by-someone-else',
    });
  });

  it('a shared release uncordons only when the last claim goes and no NodeOp holds the node', () => {
    expect(cordonAfterRelease(view(true, { [A]: 'true', [B]: 'true' }), A)).toEqual({ remove: [A], uncordon: false });
    expect(decideRelease(view(true, { [A]: 'true', [B]: 'true' }), sharedClaim(A))).toEqual({
      uncordons: false,
      patch: { annotations: { [A]: null } },
    });
    expect(decideRelease(view(true, { [A]: 'true' }), sharedClaim(A))).toEqual({
      uncordons: true,
      patch: { annotations: { [A]: null }, unschedulable: false },
    });
    expect(decideRelease(view(true, { [A]: 'true', [CORDONED_BY]: OWNER }), sharedClaim(A)).uncordons).toBe(false);
    expect(decideRelease(view(true, { [B]: 'true' }), sharedClaim(A))).toEqual({ uncordons: false });
  });

  it("a NodeOp's release lifts its own cordon, drops a leftover claim, and leaves others' alone", () => {
    expect(decideRelease(view(true, { [CORDONED_BY]: OWNER }), nodeOpClaim(OWNER))).toEqual({
      uncordons: true,
      patch: { annotations: { [CORDONED_BY]: null }, unschedulable: false },
    });
    expect(decideRelease(view(false, { [CORDONED_BY]: OWNER }), nodeOpClaim(OWNER))).toEqual({
      uncordons: false,
      patch: { annotations: { [CORDONED_BY]: null } },
    });
    expect(decideRelease(view(true, { [CORDONED_BY]: 'someone' }), nodeOpClaim(OWNER))).toEqual({ uncordons: false });
    expect(decideRelease(view(true), nodeOpClaim(OWNER))).toEqual({ uncordons: false });
  });
});

/** A CoreV1Api that serves one node and records the merge patches sent to it. */
function fakeCore(node: V1Node, conflicts = 0) {
  const patches: object[] = [];
  let left = conflicts;
  const core = {
    readNode: async () => node,
    patchNode: async ({ body }: { body: object }) => {
      if (left-- > 0) throw Object.assign(new Error('conflict'), { code: 409 });
      patches.push(body);
      return node;
    },
  } as unknown as CoreV1Api;
  return { core, patches };
}

const nodeWith = (unschedulable: boolean, annotations: Record<string, string> = {}): V1Node => ({
  metadata: { name: 'n1', resourceVersion: '7', annotations },
  spec: { unschedulable },
});

describe('writes', () => {
  it("a NodeOp's cordon and uncordon send the patches they always sent, under the read resourceVersion", async () => {
    const cordon = fakeCore(nodeWith(false));
    expect((await claimCordon(cordon.core, 'n1', nodeOpClaim(OWNER))).outcome).toBe('cordoned');
    expect(cordon.patches).toEqual([
      { metadata: { annotations: { [CORDONED_BY]: OWNER }, resourceVersion: '7' }, spec: { unschedulable: true } },
    ]);
    const uncordon = fakeCore(nodeWith(true, { [CORDONED_BY]: OWNER }));
    expect((await releaseCordon(uncordon.core, 'n1', nodeOpClaim(OWNER))).uncordoned).toBe(true);
    expect(uncordon.patches).toEqual([
      { metadata: { annotations: { [CORDONED_BY]: null }, resourceVersion: '7' }, spec: { unschedulable: false } },
    ]);
    const foreign = fakeCore(nodeWith(true));
    expect(await claimCordon(foreign.core, 'n1', nodeOpClaim(OWNER))).toEqual({ outcome: 'cordoned-by-someone-else' });
    expect(await releaseCordon(foreign.core, 'n1', nodeOpClaim(OWNER))).toEqual({ uncordoned: false });
    expect(foreign.patches).toEqual([]);
  });

  it('a conflict is thrown after conflictAttempts decisions (default one)', async () => {
    const once = fakeCore(nodeWith(false), 1);
    await expect(claimCordon(once.core, 'n1', sharedClaim(A))).rejects.toThrow('conflict');
    const retried = fakeCore(nodeWith(false), 1);
    const result = await claimCordon(retried.core, 'n1', sharedClaim(A), { conflictAttempts: 5 });
    expect(result.outcome).toBe('cordoned');
    expect(retried.patches).toEqual([
      { metadata: { annotations: { [A]: 'true' }, resourceVersion: '7' }, spec: { unschedulable: true } },
    ]);
  });
});

describe('isDisrupted', () => {
  const view = (unschedulable: boolean, annotations: Record<string, string>) => ({ unschedulable, annotations });
  it('counts our interrupt, maintenance and NodeOp cordons, not a person’s or a new node’s', () => {
    expect(isDisrupted(view(true, { [cordonClaim('a')]: 'true' }))).toBe(true);
    expect(isDisrupted(view(true, { [maintenanceClaim('p')]: 'true' }))).toBe(true);
    expect(isDisrupted(view(true, { [NODEOP_NAMES.cordonedBy]: 'ns/op@uid' }))).toBe(true);
    expect(isDisrupted(view(true, {}))).toBe(false);
    expect(isDisrupted(view(true, { [RUNTIME_REQUIRED_CORDON_ANNOTATION]: 'true' }))).toBe(false);
    expect(isDisrupted(view(false, { [cordonClaim('a')]: 'true' }))).toBe(false);
  });
  it('treats a maintenance claim as a shared claim others may join', () => {
    const node = view(true, { [maintenanceClaim('p')]: 'true' });
    expect(isForeignCordon(node)).toBe(false);
    expect(cordonAfterRelease(node, maintenanceClaim('p'))).toEqual({
      remove: [maintenanceClaim('p')],
      uncordon: true,
    });
  });
});
