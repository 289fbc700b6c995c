/**
 * What the planner does with the PackageTrustPolicies' verdicts (pure). The controller verifies the
 * images (I/O, controllers/trust/) and hands the planner one decision per SCR package version: a
 * verified digest pins every stage op of that version to it; a refusal in Enforce mode blocks the SCR
 * (nothing new of it starts, work in progress is kept), so neither the refused package nor a package
 * that depends on it runs. A Warn refusal runs (pinned when the digest is known); the controller says
 * so with a Warning Event.
 */
import { packageKey } from '../../../api/node-state.js';

/** What pinning reads and writes of a createStageOp (planner-types.ts imports this module's types). */
interface PinnableOp {
  readonly package: { readonly name: string; readonly version: string; readonly containerSHA?: string };
  readonly pinnedDigest?: string;
}

/** The hold reason of every node of an SCR an Enforce policy refused (and the condition type). */
export const PACKAGE_TRUST_REFUSED = 'PackageTrustRefused';

/** Condition and hold reasons, one per RefusalReason of the verifier. */
export type TrustRefusalReason = 'Unsigned' | 'UnknownKey' | 'DigestMismatch' | 'Unreachable';

export type PackageTrustDecision =
  | {
      readonly kind: 'verified';
      /** The image reference verified (`image:version`, or `image@sha256:…`). */
      readonly image: string;
      /** `sha256:<hex>`: the stage Jobs run `image@digest`. */
      readonly digest: string;
      /** `<policy>/<key>` for each policy that covers the image. */
      readonly signedBy: readonly string[];
    }
  | {
      readonly kind: 'refused';
      readonly image: string;
      /** Enforce: never runs; Warn: runs with a Warning Event. */
      readonly mode: 'Enforce' | 'Warn';
      readonly reason: TrustRefusalReason;
      /** The policy that refused it. */
      readonly policy: string;
      /** The digest the tag resolved to, when the registry answered (Warn runs pinned to it). */
      readonly digest?: string;
      /** The verifier's sentence: the image, what is wrong, the fix. */
      readonly message: string;
    };

/** By SCR name, then `"<pkg>|<version>"`: packages no policy covers have no entry (they run as always). */
export type PackageTrustResults = Readonly<Record<string, Readonly<Record<string, PackageTrustDecision>>>>;

/** The text of the PackageTrustRefused condition and hold: package, image, reason and the fix. */
export function refusalText(
  pkg: string,
  version: string,
  decision: PackageTrustDecision & { kind: 'refused' },
): string {
  return `package ${pkg}:${version} (image ${decision.image}) refused by PackageTrustPolicy ${decision.policy}: ${decision.reason}: ${decision.message}`;
}

/** The Enforce refusals among an SCR's decisions, as condition text, by package key order. */
export function enforcedRefusals(decisions: Readonly<Record<string, PackageTrustDecision>> | undefined): string[] {
  if (decisions === undefined) return [];
  return Object.keys(decisions)
    .sort()
    .flatMap((key) => {
      const decision = decisions[key]!;
      if (decision.kind !== 'refused' || decision.mode !== 'Enforce') return [];
      const [pkg = key, version = ''] = key.split('|');
      return [refusalText(pkg, version, decision)];
    });
}

/** The reason of the first Enforce refusal (the condition's reason), if any. */
export function firstRefusalReason(
  decisions: Readonly<Record<string, PackageTrustDecision>> | undefined,
): TrustRefusalReason | undefined {
  if (decisions === undefined) return undefined;
  for (const key of Object.keys(decisions).sort()) {
    const decision = decisions[key]!;
    if (decision.kind === 'refused' && decision.mode === 'Enforce') return decision.reason;
  }
  return undefined;
}

/**
 * The digest a stage op of this package version runs pinned to: the verified one, or the resolved
 * one of a Warn refusal. A package that pins its own digest (containerSHA) already runs by digest.
 */
export function pinnedDigest(
  decisions: Readonly<Record<string, PackageTrustDecision>> | undefined,
  op: PinnableOp,
): string | undefined {
  if (op.package.containerSHA) return undefined;
  return decisions?.[packageKey(op.package.name, op.package.version)]?.digest;
}

/** The op with its pinned digest, when a policy verified (or resolved) one. */
export function withPinnedDigest(
  decisions: Readonly<Record<string, PackageTrustDecision>> | undefined,
): <T extends PinnableOp>(op: T) => T {
  return (op) => {
    const digest = pinnedDigest(decisions, op);
    return digest === undefined ? op : { ...op, pinnedDigest: digest };
  };
}
