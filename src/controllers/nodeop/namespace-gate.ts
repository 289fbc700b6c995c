/**
 * Which namespaces' NodeOps the operator runs. A NodeOp's Job runs privileged with the host's root
 * mounted, so running every namespace's NodeOps would hand root on nodes to anyone who may create a
 * NodeOp anywhere, Pod Security or not (the operator, not the user, creates the pods). The operator
 * runs its own namespace's NodeOps (where the Skyhook controller puts its stage NodeOps) and those of
 * the namespaces an administrator lists in NODEOP_NAMESPACES; any other NodeOp gets the condition
 * `Ignored` and a Warning Event that say why and how to fix it (ignored-nodeop.ts), and nothing else
 * happens to it.
 */
import type { Condition } from '../../api/k8s-schemas.js';
import { NODEOP_CONDITIONS, NODEOP_EVENT_REASONS } from '../../api/names.js';

export interface NamespaceGate {
  /** Whether NodeOps of this namespace run. */
  allows(namespace: string): boolean;
  /** The namespaces that run, for messages. */
  readonly described: string;
}

/** The operator's own namespace plus `extra` (`*`: every namespace). */
export function namespaceGate(ownNamespace: string, extra: readonly string[]): NamespaceGate {
  if (extra.includes('*')) return { allows: () => true, described: 'every namespace' };
  const allowed = new Set([ownNamespace, ...extra]);
  return { allows: (ns) => allowed.has(ns), described: [...allowed].sort().join(', ') };
}

/** The condition an ignored NodeOp carries (pure). */
export function ignoredCondition(namespace: string, gate: NamespaceGate, now: string): Condition {
  return {
    type: NODEOP_CONDITIONS.ignored,
    status: 'True',
    reason: NODEOP_EVENT_REASONS.namespaceNotWatched,
    message:
      `this operator runs NodeOps only in: ${gate.described}; this one, in namespace '${namespace}', never runs. ` +
      `Create it in one of those namespaces, or have an administrator add '${namespace}' to NODEOP_NAMESPACES ` +
      '(Helm: settings.NODEOP_NAMESPACES) if everyone who may create NodeOps there may have root on nodes.',
    lastTransitionTime: now,
  };
}
