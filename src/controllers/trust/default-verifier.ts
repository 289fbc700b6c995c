/**
 * The verifier the operator uses unless a caller injects one (tests do). Replaced by the signing
 * module's cosign verifier once it is part of the build; until then every covered image is refused
 * as unverifiable, which is the safe answer for Enforce.
 */
import type { VerifyImageSignature } from '../../signing/verdict.js';

export const defaultVerifier: VerifyImageSignature = async (image) => ({
  kind: 'refused',
  reason: 'unreachable',
  message: `${image} cannot be verified: this operator build has no signature verifier`,
});
