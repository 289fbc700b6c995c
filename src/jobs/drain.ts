/**
 * A real drain of one node: every pod the plan allows is evicted through the Eviction API (so
 * PodDisruptionBudgets hold; an eviction refused with 429 is retried with backoff), and the drain
 * is done only when those pods are gone from the node, not when the evictions were accepted. The
 * deadline counts from `startedAtMs`, which the caller keeps in the cluster so a restarted operator
 * does not restart the clock.
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { DrainOptions } from '../api/nodeop.js';
import { errorMessage, isNotFound, isTooManyRequests } from '../kube/client.js';
import { sleep, systemClock, type Clock } from '../kube/clock.js';
import { planDrain, podRef } from './drain-plan.js';
import { nameOf } from '../api/object-meta.js';

export interface DrainContext {
  core: CoreV1Api;
  logger: Logger;
  clock?: Clock;
  /** Pods never evicted (the operator's own). */
  exempt: (pod: V1Pod) => boolean;
  /** How often the node's pods are listed again while waiting. Default 1 s (kubectl's interval). */
  pollMs?: number;
  /** Longest wait between retries of evictions refused with 429. Default 10 s. */
  maxBackoffMs?: number;
  /** Aborting ends the drain at the next step with `aborted`. */
  signal?: AbortSignal;
  /**
   * Called after each round of evictions with the pods whose eviction was refused (a
   * PodDisruptionBudget, say) as `<ns>/<pod> (<why>)`; an empty list once none is.
   */
  onBlocked?: (blocked: string[]) => void;
}

export type DrainResult =
  | { outcome: 'drained'; evicted: string[] }
  | { outcome: 'refused' | 'timed-out' | 'aborted'; message: string; remaining: string[] };

/** The disruption budget named in a 429's causes, else the API's message. */
function evictionRefusal(e: unknown): string {
  const body = (e as { body?: unknown }).body;
  try {
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as {
      details?: { causes?: { message?: string }[] };
    };
    const causes = status.details?.causes?.map((c) => c.message).filter(Boolean) ?? [];
    if (causes.length > 0) return causes.join('; ');
  } catch {
    // not a Status: fall through
  }
  return errorMessage(e);
}

async function evict(core: CoreV1Api, pod: V1Pod, options: DrainOptions): Promise<void> {
  const name = nameOf(pod);
  const namespace = pod.metadata?.namespace ?? '';
  const grace = options.gracePeriodSeconds;
  const deleteOptions = grace === undefined ? undefined : { gracePeriodSeconds: grace };
  if (options.disableEviction) {
    await core.deleteNamespacedPod({ name, namespace, ...(grace === undefined ? {} : { gracePeriodSeconds: grace }) });
    return;
  }
  await core.createNamespacedPodEviction({
    name,
    namespace,
    body: {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace },
      ...(deleteOptions ? { deleteOptions } : {}),
    },
  });
}

export async function evictPods(
  ctx: DrainContext,
  node: string,
  options: DrainOptions,
  startedAtMs: number,
): Promise<DrainResult> {
  const clock = ctx.clock ?? systemClock;
  const pollMs = ctx.pollMs ?? 1000;
  const maxBackoffMs = ctx.maxBackoffMs ?? 10_000;
  const timeoutMs = (options.timeoutSeconds ?? 0) * 1000;
  const deadline = timeoutMs > 0 ? startedAtMs + timeoutMs : Number.POSITIVE_INFINITY;
  const log = ctx.logger.child({ node });
  const accepted = new Set<string>();
  const blocked = new Map<string, string>();
  const evicted: string[] = [];
  let backoffMs = pollMs;

  for (;;) {
    const pods = (await ctx.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items;
    const plan = planDrain(pods, options, ctx.exempt);
    if (plan.refused.length > 0) {
      const remaining = plan.refused.map((r) => podRef(r.pod));
      return {
        outcome: 'refused',
        remaining,
        message: `drain of node ${node} refused: ${plan.refused.map((r) => `${podRef(r.pod)} is ${r.why}`).join('; ')}`,
      };
    }
    if (plan.evict.length === 0) return { outcome: 'drained', evicted };

    blocked.clear();
    for (const pod of plan.evict) {
      const uid = pod.metadata?.uid ?? '';
      if (accepted.has(uid) || pod.metadata?.deletionTimestamp) continue;
      try {
        await evict(ctx.core, pod, options);
        accepted.add(uid);
        evicted.push(podRef(pod));
        log.info({ pod: podRef(pod) }, 'evicted');
      } catch (e) {
        if (isNotFound(e)) continue;
        blocked.set(podRef(pod), isTooManyRequests(e) ? evictionRefusal(e) : errorMessage(e));
      }
    }

    ctx.onBlocked?.([...blocked].map(([ref, why]) => `${ref} (${why.replace(/[()]/g, '')})`));
    const now = clock.now();
    if (ctx.signal?.aborted || now >= deadline) {
      const remaining = plan.evict.map(podRef);
      const detail = plan.evict.map((pod) => {
        const ref = podRef(pod);
        const reason =
          blocked.get(ref) ??
          (pod.metadata?.deletionTimestamp || accepted.has(pod.metadata?.uid ?? '')
            ? 'terminating'
            : 'not evicted yet');
        return `${ref} (${reason})`;
      });
      if (ctx.signal?.aborted)
        return {
          outcome: 'aborted',
          remaining,
          message: `drain of node ${node} stopped; still there: ${detail.join(', ')}`,
        };
      return {
        outcome: 'timed-out',
        remaining,
        message: `drain of node ${node} timed out after ${options.timeoutSeconds ?? 0}s; still there: ${detail.join(', ')}`,
      };
    }
    // Refused evictions back off (a PDB frees up slowly); otherwise poll for the evicted pods to go.
    backoffMs = blocked.size > 0 ? Math.min(backoffMs * 2, maxBackoffMs) : pollMs;
    if (blocked.size > 0)
      log.info({ blocked: Object.fromEntries(blocked), retryInMs: backoffMs }, 'evictions refused; retrying');
    await sleep(clock, Math.max(0, Math.min(backoffMs, deadline - now)));
  }
}
