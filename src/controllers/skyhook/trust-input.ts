/**
 * The PackageTrustPolicies' decisions as planner input (I/O: the verifier asks registries; verdicts
 * are cached per image and policy generation in controllers/trust/package-trust.ts), and the Event
 * each Skyhook gets the first time it sees a decision: the package, the image, why, and the fix.
 */
import type { Skyhook } from '../../api/skyhook.js';
import type { TrustNotice } from '../trust/package-trust.js';
import type { SkyhookIo } from './context.js';
import { type PackageTrustResults, refusalText } from './plan/package-trust.js';

export interface TrustInput {
  packageTrust?: PackageTrustResults;
  /** Ask an unreachable registry again after this long. */
  retryAfterMs?: number;
}

/** The Event of a decision: Warning for a refusal (Enforce: not run; Warn: run anyway), Normal once verified. */
export function trustNoticeEvent(notice: TrustNotice): { type: 'Normal' | 'Warning'; reason: string; message: string } {
  const { decision } = notice;
  if (decision.kind === 'verified')
    return {
      type: 'Normal',
      reason: 'PackageTrustVerified',
      message: `package ${notice.package}:${notice.version} (image ${decision.image}) is signed by ${decision.signedBy.join(', ')}; its stages run ${decision.image.replace(/[:@][^/]*$/, '')}@${decision.digest}`,
    };
  const text = refusalText(notice.package, notice.version, decision);
  if (decision.mode === 'Enforce')
    return {
      type: 'Warning',
      reason: 'PackageTrustRefused',
      message: `${text}. No stage of this Skyhook starts until the image is signed by a key the policy trusts, or the policy or the package changes`,
    };
  const runs = decision.digest ? `pinned to ${decision.digest}` : 'by its tag';
  return {
    type: 'Warning',
    reason: 'PackageTrustWarning',
    message: `${text}. It runs anyway (${runs}): the policy is in Warn mode`,
  };
}

export async function packageTrustInput(io: SkyhookIo, skyhooks: readonly Skyhook[]): Promise<TrustInput> {
  const policies = io.caches.trustPolicies?.list() ?? [];
  if (io.trust === undefined || policies.length === 0) return {};
  const run = await io.trust.decide(skyhooks, policies);
  for (const notice of run.notices) {
    const scr = io.caches.skyhooks.get(notice.skyhook);
    const event = trustNoticeEvent(notice);
    io.logger.info({ skyhook: notice.skyhook, package: notice.package, reason: event.reason }, event.message);
    if (scr) io.events.record(scr, event.type, event.reason, event.message);
  }
  return {
    packageTrust: run.results,
    ...(run.retryAfterMs !== undefined ? { retryAfterMs: run.retryAfterMs } : {}),
  };
}
