/**
 * The PackageTrustPolicies applied to the Skyhooks' packages: one verification per image reference
 * and policy generation, however many nodes, Skyhooks or reconciles ask (the verdict is cached, and
 * a verification under way is shared), turned into the planner's decisions (plan/package-trust.ts).
 * A verdict stands until the policy changes; an unreachable registry is asked again after a while.
 * Each decision a Skyhook sees for the first time is returned as a notice, for its Event.
 */
import pLimit from 'p-limit';
import { packageKey } from '../../api/node-state.js';
import { nameOf } from '../../api/object-meta.js';
import type { PackageTrustPolicy } from '../../api/package-trust-policy.js';
import type { Skyhook } from '../../api/skyhook.js';
import type { RefusalReason, RegistryAccess, SignatureVerdict, VerifyImageSignature } from '../../signing/verdict.js';
import type { PackageTrustDecision, PackageTrustResults, TrustRefusalReason } from '../skyhook/plan/package-trust.js';
import { packageImageRef } from '../skyhook/build/stage-nodeop.js';
import { type TrustRequirement, trustRequirements } from './policy-match.js';

/** An unreachable registry (or one that refused our credentials) is asked again after this long. */
export const UNREACHABLE_RETRY_MS = 30_000;
/** Verdicts kept; past this the oldest go (a long life of many package versions). */
const MAX_VERDICTS = 2000;
/** Verifications in flight at once. */
const VERIFY_CONCURRENCY = 4;

const REASONS: Record<RefusalReason, TrustRefusalReason> = {
  unsigned: 'Unsigned',
  'unknown-key': 'UnknownKey',
  'digest-mismatch': 'DigestMismatch',
  unreachable: 'Unreachable',
};

export interface PackageTrustDeps {
  verify: VerifyImageSignature;
  /** The registry access of a package with these pull secrets (registry-access.ts). */
  accessFor: (pullSecrets: readonly string[]) => Promise<RegistryAccess>;
  /** IMAGE_PULL_SECRET; empty = none. */
  operatorPullSecret: string;
  now: () => number;
}

/** A decision a Skyhook sees for the first time: what its Event says. */
export interface TrustNotice {
  skyhook: string;
  package: string;
  version: string;
  decision: PackageTrustDecision;
}

export interface TrustRun {
  results: PackageTrustResults;
  notices: TrustNotice[];
  /** When an unreachable verdict is due to be asked again (ms from now), if any is in the results. */
  retryAfterMs?: number;
}

interface CachedVerdict {
  verdict: Promise<SignatureVerdict>;
  /** Unreachable verdicts expire; the others stand until the policy's generation changes. */
  expiresAt?: number;
}

export class PackageTrustChecker {
  private readonly verdicts = new Map<string, CachedVerdict>();
  private readonly noticed = new Set<string>();
  private readonly limit = pLimit(VERIFY_CONCURRENCY);
  private readonly deps: PackageTrustDeps;

  constructor(deps: PackageTrustDeps) {
    this.deps = deps;
  }

  /** Decisions for every package of the Skyhooks that a policy covers. */
  async decide(skyhooks: readonly Skyhook[], policies: readonly PackageTrustPolicy[]): Promise<TrustRun> {
    const results: Record<string, Record<string, PackageTrustDecision>> = {};
    const notices: TrustNotice[] = [];
    let retryAt: number | undefined;
    if (policies.length === 0) return { results, notices };
    const jobs = skyhooks.flatMap((scr) =>
      Object.entries(scr.spec.packages ?? {}).map(([pkgName, pkg]) => async () => {
        const requirements = trustRequirements(pkg.image, policies);
        if (requirements.length === 0) return;
        const image = packageImageRef(pkg);
        const secrets = [this.deps.operatorPullSecret, ...(pkg.imagePullSecrets ?? []).map((s) => s.name)];
        const verdicts = await Promise.all(requirements.map((req) => this.verdictFor(image, req, secrets)));
        const decision = combine(image, requirements, verdicts);
        const scrName = nameOf(scr);
        const byPackage = results[scrName] ?? {};
        results[scrName] = byPackage;
        byPackage[packageKey(pkgName, pkg.version)] = decision;
        if (decision.kind === 'refused' && decision.reason === 'Unreachable')
          retryAt = Math.min(retryAt ?? Infinity, this.deps.now() + UNREACHABLE_RETRY_MS);
        const seen = `${scrName}|${pkgName}|${pkg.version}|${JSON.stringify(decision)}`;
        if (!this.noticed.has(seen)) {
          this.noticed.add(seen);
          notices.push({ skyhook: scrName, package: pkgName, version: pkg.version, decision });
        }
      }),
    );
    await Promise.all(jobs.map((job) => job()));
    const run: TrustRun = { results, notices };
    if (retryAt !== undefined) run.retryAfterMs = Math.max(0, retryAt - this.deps.now());
    return run;
  }

  /** Forget a deleted Skyhook's notices (a new one of the same name gets its Events again). */
  forget(skyhook: string): void {
    for (const key of this.noticed) if (key.startsWith(`${skyhook}|`)) this.noticed.delete(key);
  }

  private verdictFor(image: string, req: TrustRequirement, secrets: readonly string[]): Promise<SignatureVerdict> {
    const key = `${image}|${req.policy}|${req.generation}|${[...new Set(secrets.filter(Boolean))].join(',')}`;
    const now = this.deps.now();
    const cached = this.verdicts.get(key);
    if (cached && (cached.expiresAt === undefined || cached.expiresAt > now)) return cached.verdict;
    const entry: CachedVerdict = { verdict: this.limit(() => this.verifyOnce(image, req, secrets)) };
    this.verdicts.set(key, entry);
    if (this.verdicts.size > MAX_VERDICTS) this.verdicts.delete(this.verdicts.keys().next().value!);
    void entry.verdict.then((verdict) => {
      if (verdict.kind === 'refused' && verdict.reason === 'unreachable')
        entry.expiresAt = this.deps.now() + UNREACHABLE_RETRY_MS;
    });
    return entry.verdict;
  }

  /** The verifier's verdict; a failure to even ask (a bad pull secret, a throw) is `unreachable`. */
  private async verifyOnce(
    image: string,
    req: TrustRequirement,
    secrets: readonly string[],
  ): Promise<SignatureVerdict> {
    try {
      return await this.deps.verify(image, req.keys, await this.deps.accessFor(secrets));
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return {
        kind: 'refused',
        reason: 'unreachable',
        message: `${image} could not be verified (${why}); check the registry, REGISTRY_MIRRORS and the pull secrets`,
      };
    }
  }
}

/** Every covering policy must pass: the first Enforce refusal, else the first Warn one, else verified. */
function combine(
  image: string,
  requirements: readonly TrustRequirement[],
  verdicts: readonly SignatureVerdict[],
): PackageTrustDecision {
  const refusals = verdicts.flatMap((verdict, index) =>
    verdict.kind === 'refused' ? [{ verdict, req: requirements[index]! }] : [],
  );
  const refusal = refusals.find((r) => r.req.mode === 'Enforce') ?? refusals[0];
  const digest = verdicts.find((verdict) => verdict.digest !== undefined)?.digest;
  if (refusal) {
    const { verdict, req } = refusal;
    return {
      kind: 'refused',
      image,
      mode: req.mode,
      reason: REASONS[verdict.kind === 'refused' ? verdict.reason : 'unreachable'],
      policy: req.policy,
      ...(digest !== undefined ? { digest } : {}),
      message: verdict.kind === 'refused' ? verdict.message : '',
    };
  }
  const signedBy = verdicts.map((verdict, index) =>
    verdict.kind === 'verified' ? `${requirements[index]!.policy}/${verdict.keyName}` : '',
  );
  return { kind: 'verified', image, digest: digest!, signedBy };
}
