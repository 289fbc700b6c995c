/**
 * Writes of the whole cluster (every user of the API server: the operator, the Job controller, the
 * scheduler, kwok's simulated kubelets, Events) from the audit log. A stand-in: the "writes" work of
 * issue 18 gives bench/audit-writes.ts a per-user breakdown, which replaces this function.
 */
import { countWrites, type WriteCount } from './audit-writes.js';

/** Every completed write request after `fromOffset`, whoever made it. */
export function countClusterWrites(path: string, fromOffset: number): WriteCount {
  return countWrites(path, fromOffset, '');
}
