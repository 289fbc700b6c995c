/**
 * The checks of a health gate that read only the operator's caches: node conditions, a CEL
 * expression over the Node, and pods Ready on the node. Each answers passed or what failed, in words
 * a person reads in the node's `waiting_<scr>` annotation. Prometheus is prometheus-gate.ts (I/O).
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { GateCheckResult, NodeConditionCheck, PodsCheck } from '../../../../api/health-gates.js';
import { selectorMatches } from '../../../../api/label-selector.js';
import { nameOf } from '../../../../api/object-meta.js';
import { type CompiledCel, firstLine } from './cel-gate.js';

const PASSED: GateCheckResult = { passed: true };

/** Every listed condition has its expected status (`Absent`: no condition of the type). */
export function checkNodeConditions(checks: NodeConditionCheck[], node: V1Node): GateCheckResult {
  const conditions = node.status?.conditions ?? [];
  const failures: string[] = [];
  for (const check of checks) {
    const found = conditions.find((condition) => condition.type === check.type);
    const actual = found === undefined ? 'Absent' : found.status;
    if (actual === check.status) continue;
    const why = found?.reason ? ` (${found.reason}${found.message ? `: ${found.message}` : ''})` : '';
    failures.push(
      found === undefined
        ? `condition ${check.type} is absent, want ${check.status}`
        : `condition ${check.type} is ${actual}${why}, want ${check.status}`,
    );
  }
  return failures.length === 0 ? PASSED : { passed: false, detail: failures.join('; ') };
}

/** The expression is true on the Node; false, an error or a non-bool result fails the gate. */
export function checkCel(compiled: CompiledCel, node: V1Node): GateCheckResult {
  try {
    const value: unknown = compiled.evaluate({ node });
    if (value === true) return PASSED;
    if (value === false) return { passed: false, detail: `CEL expression is false: ${compiled.expression}` };
    return { passed: false, detail: `CEL expression returned ${typeof value}, not a bool: ${compiled.expression}` };
  } catch (error) {
    return { passed: false, detail: `CEL expression failed: ${firstLine(error)}` };
  }
}

/** Pod Ready condition is True. */
export function isPodReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/**
 * At least one pod of the selector (and namespace) is on the node, and every one of them is Ready
 * and not being deleted: a DaemonSet's validator pod, rescheduled after the uncordon, must exist.
 */
export function checkPods(check: PodsCheck, nodeName: string, pods: V1Pod[]): GateCheckResult {
  const matching = pods.filter(
    (pod) =>
      pod.spec?.nodeName === nodeName &&
      (check.namespace === undefined || pod.metadata?.namespace === check.namespace) &&
      selectorMatches(check.selector, pod.metadata?.labels ?? {}),
  );
  if (matching.length === 0)
    return { passed: false, detail: `no pod matching the selector${inNamespace(check)} on the node` };
  const notReady = matching
    .filter((pod) => pod.metadata?.deletionTimestamp !== undefined || !isPodReady(pod))
    .map((pod) => `${pod.metadata?.namespace ?? ''}/${nameOf(pod)}`)
    .sort();
  return notReady.length === 0 ? PASSED : { passed: false, detail: `pods not Ready: ${notReady.join(', ')}` };
}

const inNamespace = (check: PodsCheck): string => (check.namespace ? ` in namespace ${check.namespace}` : '');
