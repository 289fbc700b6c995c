/** An ignored NodeOp's one write: the `Ignored` condition (namespace-gate.ts) and its Event. */
import { NODEOP_EVENT_REASONS } from '../../api/names.js';
import { mergePatchCustomObjectStatus, type CustomObjectRef } from '../../kube/client.js';
import type { NodeOpContext, NodeOpView } from './context.js';
import { ignoredCondition } from './namespace-gate.js';

/** Writes the `Ignored` condition once (and its Event); a NodeOp that already carries it costs nothing. */
export async function markIgnored(ctx: NodeOpContext, op: NodeOpView, ref: CustomObjectRef): Promise<void> {
  const gate = ctx.namespaces;
  const { nodeOp } = op;
  const condition = ignoredCondition(op.namespace, gate, new Date(ctx.clock.now()).toISOString());
  const previous = nodeOp.status?.conditions ?? [];
  const current = previous.find((c) => c.type === condition.type);
  if (current?.status === 'True' && current.message === condition.message) return;
  ctx.logger.warn({ nodeOp: op.key }, 'NodeOp ignored: its namespace is not among NODEOP_NAMESPACES');
  ctx.events.record(nodeOp, 'Warning', NODEOP_EVENT_REASONS.namespaceNotWatched, condition.message);
  await mergePatchCustomObjectStatus(ctx.clients.custom, ref, {
    phase: 'Pending',
    conditions: [...previous.filter((c) => c.type !== condition.type), condition],
  });
}
