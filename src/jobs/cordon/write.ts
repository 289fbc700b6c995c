/**
 * Cordon and uncordon under a claim (claims.ts has the rules). Each write reads the node fresh,
 * decides with the same pure rules the planner used on its cached view, and patches under that
 * resourceVersion (jobs/node-patch.ts), so a concurrent change is never overwritten: a node cordoned
 * by a person, by another NodeOp or by an earlier NodeOp of the same name (another UID) is never
 * uncordoned by us, and two SCRs releasing at once never both keep it cordoned or both lift it.
 */
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import { patchNodeFromFresh } from '../node-patch.js';
import {
  type CordonClaim,
  type CordonOutcome,
  type CordonPatch,
  cordonViewOf,
  decideCordon,
  decideRelease,
} from './claims.js';

export interface CordonWriteOptions {
  /** Reads and decisions on a conflict before it is thrown; default 1 (the caller's requeue retries). */
  conflictAttempts?: number;
}

const mergePatchOf = ({ annotations, unschedulable }: CordonPatch) => ({
  metadata: { annotations },
  ...(unschedulable !== undefined ? { spec: { unschedulable } } : {}),
});

/** Cordons `name` under `claim`; `written` is the node when this call wrote it. */
export async function claimCordon(
  core: CoreV1Api,
  name: string,
  claim: CordonClaim,
  { conflictAttempts }: CordonWriteOptions = {},
): Promise<{ outcome: CordonOutcome; written?: V1Node }> {
  let outcome: CordonOutcome = 'ours-already';
  const written = await patchNodeFromFresh(
    core,
    name,
    (node) => {
      const decision = decideCordon(cordonViewOf(node), claim);
      outcome = decision.outcome;
      return decision.patch && mergePatchOf(decision.patch);
    },
    conflictAttempts,
  );
  return written ? { outcome, written } : { outcome };
}

/** Releases `claim` on `name`; `uncordoned` is true when this call made the node schedulable. */
export async function releaseCordon(
  core: CoreV1Api,
  name: string,
  claim: CordonClaim,
  { conflictAttempts }: CordonWriteOptions = {},
): Promise<{ uncordoned: boolean; written?: V1Node }> {
  let uncordons = false;
  const written = await patchNodeFromFresh(
    core,
    name,
    (node) => {
      const decision = decideRelease(cordonViewOf(node), claim);
      uncordons = decision.uncordons;
      return decision.patch && mergePatchOf(decision.patch);
    },
    conflictAttempts,
  );
  return written ? { uncordoned: uncordons, written } : { uncordoned: false };
}
