/**
 * `reset <skyhook>` and `deployment-policy reset <skyhook>`. `reset` removes the SCR's state from
 * every node that has some (node-reset.ts), so the operator starts them over, and, unless
 * --skip-batch-reset, restarts the rollout too: every compartment's batchState back to batch 1 and
 * the node pick order (`nodePriority`, `nodeOrderOffset`) cleared. `deployment-policy reset` does only
 * the batch part. Both ask for confirmation.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { Skyhook } from '../../api/skyhook.js';
import { commitChanges, type Change, type ChangeSet } from './changes.js';
import type { PluginContext } from './context.js';
import { nodeResetChange } from './node-reset.js';
import { requirePositionals, UsageError } from './options.js';
import { nameOf } from '../../api/object-meta.js';

/** upstream's fresh batch state: batch 1, no history. */
export const FRESH_BATCH_STATE = {
  currentBatch: 1,
  consecutiveFailures: 0,
  completedNodes: 0,
  failedNodes: 0,
  shouldStop: false,
  lastBatchSize: 0,
  lastBatchFailed: false,
} as const;

export const DEPLOYMENT_POLICY_HELP = `Usage: skyhook deployment-policy reset SKYHOOK   (alias: dp)

Restarts the Skyhook's rollout at batch 1 in every compartment (status.compartmentStatuses[*].batchState); asks first.`;

/** The status patch restarting the rollout; `withPickOrder` also forgets which nodes were picked first. */
export function batchResetChange(skyhook: Skyhook, withPickOrder: boolean): Change | undefined {
  const name = nameOf(skyhook);
  const compartments = Object.keys(skyhook.status?.compartmentStatuses ?? {}).sort();
  const status: Record<string, unknown> = {};
  if (compartments.length > 0)
    status['compartmentStatuses'] = Object.fromEntries(
      compartments.map((c) => [c, { batchState: { ...FRESH_BATCH_STATE } }]),
    );
  const pickOrder = withPickOrder
    ? (['nodePriority', 'nodeOrderOffset'] as const).filter((field) => skyhook.status?.[field] !== undefined)
    : [];
  for (const field of pickOrder) status[field] = null;
  if (Object.keys(status).length === 0) return undefined;
  const parts = [
    ...(compartments.length > 0 ? [`set batchState to batch 1 in compartment(s) ${compartments.join(', ')}`] : []),
    ...(pickOrder.length > 0 ? [`clear status.${pickOrder.join(', status.')}`] : []),
  ];
  return { target: { kind: 'Skyhook', name, subresource: 'status' }, patch: { status }, description: parts.join('; ') };
}

export function skyhookResetChanges(skyhook: Skyhook, nodes: V1Node[], skipBatchReset: boolean): ChangeSet {
  const name = nameOf(skyhook);
  const changes = nodes.flatMap((node) => nodeResetChange(node, name) ?? []);
  const batch = skipBatchReset ? undefined : batchResetChange(skyhook, true);
  return {
    action: `reset Skyhook ${name} on ${changes.length} node(s)`,
    destructive: true,
    changes: batch ? [...changes, batch] : changes,
  };
}

export async function runReset(ctx: PluginContext, positionals: string[]): Promise<number> {
  const [name] = requirePositionals(positionals, ['skyhook']);
  const skyhook = await ctx.getSkyhook(name!);
  return commitChanges(ctx, skyhookResetChanges(skyhook, await ctx.listNodes(), ctx.options.skipBatchReset));
}

export async function runDeploymentPolicy(ctx: PluginContext, positionals: string[]): Promise<number> {
  const [subcommand, ...rest] = positionals;
  if (subcommand !== 'reset')
    throw new UsageError(
      subcommand === undefined ? 'missing subcommand' : `unknown subcommand 'deployment-policy ${subcommand}'`,
    );
  const [name] = requirePositionals(rest, ['skyhook']);
  const skyhook = await ctx.getSkyhook(name!);
  const change = batchResetChange(skyhook, false);
  const action = `reset the rollout batches of Skyhook ${name}`;
  const set: ChangeSet = change
    ? { action, destructive: true, changes: [change] }
    : {
        action,
        destructive: true,
        changes: [],
        notes: [`Skyhook ${name} has no compartment status yet (status.compartmentStatuses is empty)`],
      };
  return commitChanges(ctx, set);
}
