/**
 * The checker: one verification per image reference and policy generation, however many Skyhooks
 * and reconciles ask; the verdicts turned into decisions (every covering policy must pass); the
 * notices that become Events, once per Skyhook and decision.
 */
import { describe, expect, it } from '@jest/globals';
import type { Skyhook } from '../../../../src/api/skyhook.js';
import { PackageTrustChecker, UNREACHABLE_RETRY_MS } from '../../../../src/controllers/trust/package-trust.js';
import type {
  RegistryAccess,
  SignatureVerdict,
  TrustedKey,
  VerifyImageSignature,
} from '../../../../src/signing/verdict.js';
import { pkg, scr } from '../skyhook/plan/world.js';
import { DIGEST, policyFor, trustPolicy, KEY_B } from './trust-fixtures.js';

interface Call {
  image: string;
  keys: readonly TrustedKey[];
  access: RegistryAccess;
}

function checker(verdict: (image: string) => SignatureVerdict, clock = { now: 0 }) {
  const calls: Call[] = [];
  const secretsAsked: string[][] = [];
  const verify: VerifyImageSignature = async (image, keys, access) => {
    calls.push({ image, keys, access });
    return verdict(image);
  };
  const trust = new PackageTrustChecker({
    verify,
    accessFor: async (secrets) => {
      secretsAsked.push([...secrets]);
      return { credentialsFor: () => undefined };
    },
    operatorPullSecret: 'operator-pull',
    now: () => clock.now,
  });
  return { trust, calls, secretsAsked, clock };
}

const verified: SignatureVerdict = { kind: 'verified', digest: DIGEST, keyName: 'a' };
const unsigned: SignatureVerdict = {
  kind: 'refused',
  reason: 'unsigned',
  digest: DIGEST,
  message: 'no signature; sign it with cosign sign --key',
};
const PREFIX = 'ghcr.io/nvidia/';
const tuning = (name: string, version = '1.0.0'): Skyhook =>
  scr(name, {
    packages: { tuning: pkg(version, { image: 'ghcr.io/nvidia/tuning', imagePullSecrets: [{ name: 'own' }] }) },
  });

describe('PackageTrustChecker', () => {
  it('verifies a package version once, however many Skyhooks and reconciles ask', async () => {
    const { trust, calls } = checker(() => verified);
    const skyhooks = [tuning('s1'), tuning('s2'), tuning('s3')];
    for (let reconcile = 0; reconcile < 20; reconcile++) await trust.decide(skyhooks, [policyFor(PREFIX)]);
    expect(calls.map((call) => call.image)).toEqual(['ghcr.io/nvidia/tuning:1.0.0']);
    expect(calls[0]!.keys.map((key) => key.name)).toEqual(['a']);
  });

  it('verifies again for a new version or a new policy generation, not otherwise', async () => {
    const { trust, calls } = checker(() => verified);
    await trust.decide([tuning('s', '1.0.0')], [policyFor(PREFIX)]);
    await trust.decide([tuning('s', '1.1.0')], [policyFor(PREFIX)]);
    const changed = policyFor(PREFIX);
    changed.metadata.generation = 2;
    await trust.decide([tuning('s', '1.1.0')], [changed]);
    expect(calls.map((call) => call.image)).toEqual([
      'ghcr.io/nvidia/tuning:1.0.0',
      'ghcr.io/nvidia/tuning:1.1.0',
      'ghcr.io/nvidia/tuning:1.1.0',
    ]);
  });

  it('logs in with the operator pull secret first, then the package own', async () => {
    const { trust, secretsAsked } = checker(() => verified);
    await trust.decide([tuning('s')], [policyFor(PREFIX)]);
    expect(secretsAsked).toEqual([['operator-pull', 'own']]);
  });

  it('decides nothing for images no policy covers, and verifies none', async () => {
    const { trust, calls } = checker(() => verified);
    const run = await trust.decide([tuning('s')], [policyFor('docker.io/')]);
    expect(run.results).toEqual({});
    expect(calls).toEqual([]);
  });

  it('turns a verified image into its digest, and a refusal into reason, mode, policy and message', async () => {
    const ok = await checker(() => verified).trust.decide([tuning('s')], [policyFor(PREFIX)]);
    expect(ok.results['s']?.['tuning|1.0.0']).toEqual({
      kind: 'verified',
      image: 'ghcr.io/nvidia/tuning:1.0.0',
      digest: DIGEST,
      signedBy: ['trusted/a'],
    });
    const refused = await checker(() => unsigned).trust.decide([tuning('s')], [policyFor(PREFIX, 'Warn')]);
    expect(refused.results['s']?.['tuning|1.0.0']).toEqual({
      kind: 'refused',
      image: 'ghcr.io/nvidia/tuning:1.0.0',
      mode: 'Warn',
      reason: 'Unsigned',
      policy: 'trusted',
      digest: DIGEST,
      message: unsigned.kind === 'refused' ? unsigned.message : '',
    });
  });

  it('needs every covering policy to pass: an Enforce refusal wins over a Warn one and a verification', async () => {
    const enforce = trustPolicy('strict', {
      keys: [{ name: 'b', publicKey: KEY_B }],
      images: [{ prefix: PREFIX, keys: ['b'] }],
    });
    const { trust } = checker(() => verified);
    // The checker asks per policy; make the strict one refuse by its key.
    const strictRefuses: VerifyImageSignature = async (_image, keys) =>
      keys[0]?.name === 'b' ? { kind: 'refused', reason: 'unknown-key', message: 'signed by another key' } : verified;
    const both = new PackageTrustChecker({
      verify: strictRefuses,
      accessFor: async () => ({ credentialsFor: () => undefined }),
      operatorPullSecret: '',
      now: () => 0,
    });
    const run = await both.decide([tuning('s')], [policyFor(PREFIX, 'Warn'), enforce]);
    const decision = run.results['s']?.['tuning|1.0.0'];
    expect(decision?.kind === 'refused' && [decision.mode, decision.reason, decision.policy]).toEqual([
      'Enforce',
      'UnknownKey',
      'strict',
    ]);
    expect((await trust.decide([tuning('s')], [policyFor(PREFIX)])).results['s']?.['tuning|1.0.0']?.kind).toBe(
      'verified',
    );
  });

  it('asks an unreachable registry again once the retry delay has passed, and says when', async () => {
    const clock = { now: 0 };
    const { trust, calls } = checker(
      () => ({ kind: 'refused', reason: 'unreachable', message: 'connection refused' }),
      clock,
    );
    const first = await trust.decide([tuning('s')], [policyFor(PREFIX)]);
    expect(first.retryAfterMs).toBe(UNREACHABLE_RETRY_MS);
    clock.now = UNREACHABLE_RETRY_MS - 1;
    await trust.decide([tuning('s')], [policyFor(PREFIX)]);
    expect(calls).toHaveLength(1);
    clock.now = UNREACHABLE_RETRY_MS + 1;
    await trust.decide([tuning('s')], [policyFor(PREFIX)]);
    expect(calls).toHaveLength(2);
  });

  it('treats a verifier that throws as unreachable, naming the error', async () => {
    const trust = new PackageTrustChecker({
      verify: async () => {
        throw new Error('socket hang up');
      },
      accessFor: async () => ({ credentialsFor: () => undefined }),
      operatorPullSecret: '',
      now: () => 0,
    });
    const decision = (await trust.decide([tuning('s')], [policyFor(PREFIX)])).results['s']?.['tuning|1.0.0'];
    expect(decision?.kind === 'refused' && decision.reason).toBe('Unreachable');
    expect(decision?.kind === 'refused' && decision.message).toContain('socket hang up');
  });

  it('notices each decision once per Skyhook (one Event each), again after the Skyhook is forgotten', async () => {
    const { trust } = checker(() => unsigned);
    const first = await trust.decide([tuning('s1'), tuning('s2')], [policyFor(PREFIX)]);
    expect(first.notices.map((n) => n.skyhook).sort()).toEqual(['s1', 's2']);
    expect((await trust.decide([tuning('s1'), tuning('s2')], [policyFor(PREFIX)])).notices).toEqual([]);
    trust.forget('s1');
    expect((await trust.decide([tuning('s1')], [policyFor(PREFIX)])).notices.map((n) => n.skyhook)).toEqual(['s1']);
  });
});
