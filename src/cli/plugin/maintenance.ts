/**
 * `maintenance status [NODE]` and `maintenance release NODE [--force]`: node-initiated maintenance
 * (MaintenancePolicy, the node daemon's Leases) as a person checks and unsticks it. The reads and the
 * one command that writes; what a row means is in maintenance-view.ts, what a release may do in
 * maintenance-release.ts.
 */
import type { V1Node } from '@kubernetes/client-node';
import { maintenanceLeaseName } from '../../api/maintenance-protocol.js';
import { nameOf } from '../../api/object-meta.js';
import { isConflict, isNotFound } from '../../kube/client.js';
import { commitChanges, type ChangeSet } from './changes.js';
import type { PluginContext } from './context.js';
import { releaseChanges } from './maintenance-release.js';
import { readMaintenance, type MaintenanceSnapshot } from './maintenance-read.js';
import type { MaintenanceRow } from './maintenance-view.js';
import { CommandError, requirePositionals, UsageError } from './options.js';
import { render, type Column } from './output.js';

export const MAINTENANCE_HELP = `Usage: skyhook maintenance <subcommand> [options]

  status [NODE]           nodes in node-initiated maintenance: holding a slot, queued (and why), or left behind
  release NODE [--force]  free a stuck node's slot and lift its maintenance cordon (asks first)

release frees without --force only what nobody uses any more: a node that is gone, a node whose daemon
stopped reporting, a grant or cordon left behind. A slot whose daemon is alive is refused (the node is
draining, running its script or rebooting; the message says how it ends by itself); --force releases it
anyway. See docs/maintenance.md.`;

const age = (iso: string | undefined, now: number): string => {
  if (!iso) return '-';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${Math.round(seconds / 3600)}h`;
};

function columns(now: number): Column<MaintenanceRow>[] {
  return [
    { header: 'NODE', value: (r) => r.node },
    { header: 'POLICY', value: (r) => r.policy ?? '-' },
    { header: 'STATE', value: (r) => (r.stale && r.state !== 'idle' ? `${r.state} (stale)` : r.state) },
    { header: 'PROTOCOL', value: (r) => r.protocol ?? '-' },
    { header: 'PHASE/REASON', value: (r) => r.phase ?? r.reason ?? '-' },
    { header: 'REQUESTED', value: (r) => age(r.requestedAt, now) },
    { header: 'HEARTBEAT', value: (r) => (r.heartbeatAgeSeconds === undefined ? '-' : `${r.heartbeatAgeSeconds}s`) },
    { header: 'CORDONED', value: (r) => (r.cordoned ? 'yes' : r.nodeExists ? 'no' : 'node gone') },
    { header: 'MESSAGE', value: (r) => r.message ?? '-', wide: true },
  ];
}

async function readRows(ctx: PluginContext): Promise<MaintenanceSnapshot & { nodes: V1Node[] }> {
  const nodes = await ctx.listNodes();
  return { ...(await readMaintenance(ctx.clients, ctx.options.namespace, nodes)), nodes };
}

async function maintenanceStatus(ctx: PluginContext, positionals: string[]): Promise<number> {
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  const [only] = positionals;
  const { rows } = await readRows(ctx);
  const shown = only ? rows.filter((r) => r.node === only) : rows;
  if (shown.length === 0 && ['table', 'wide', 'name'].includes(ctx.options.output)) {
    console.error(
      only ? `node ${only} is not in node-initiated maintenance` : 'no node is in node-initiated maintenance',
    );
    return 0;
  }
  console.log(render(shown, columns(Date.now()), ctx.options.output, (r) => `node/${r.node}`));
  return 0;
}

/** The release of `name` as the cluster is now: the changes, the refusal, or undefined (not in maintenance). */
async function decideRelease(ctx: PluginContext, name: string): Promise<ChangeSet | { refused: string }> {
  const { rows, leases, nodes } = await readRows(ctx);
  const node = nodes.find((n) => nameOf(n) === name);
  const lease = leases.get(name);
  const row = rows.find((r) => r.node === name);
  if (!row) {
    if (!node) throw new CommandError(`node ${name} not found and no maintenance Lease names it`);
    const notes = [`node ${name} is not in node-initiated maintenance`];
    return { action: `release node ${name}`, destructive: true, changes: [], notes };
  }
  const nodeInput = node && {
    annotations: node.metadata?.annotations ?? {},
    unschedulable: node.spec?.unschedulable === true,
  };
  const rv = lease?.metadata?.resourceVersion;
  const leaseInput = lease && {
    namespace: ctx.options.namespace,
    name: lease.metadata?.name ?? maintenanceLeaseName(name),
    ...(rv ? { resourceVersion: rv } : {}),
  };
  return releaseChanges({
    row,
    ...(nodeInput ? { node: nodeInput } : {}),
    ...(leaseInput ? { lease: leaseInput } : {}),
    force: ctx.options.force,
  });
}

/** Tries again from a fresh read when the Lease moved (its daemon renews it every few seconds). */
const RELEASE_ATTEMPTS = 5;

async function maintenanceRelease(ctx: PluginContext, positionals: string[]): Promise<number> {
  const [name] = requirePositionals(positionals, ['node']) as [string];
  for (let attempt = 1; ; attempt++) {
    const decision = await decideRelease(ctx, name);
    if ('refused' in decision) throw new CommandError(decision.refused);
    try {
      return await commitChanges(ctx, decision);
    } catch (error) {
      if (isConflict(error) && attempt < RELEASE_ATTEMPTS) continue;
      if (isNotFound(error))
        throw new CommandError(`node ${name} or its Lease vanished while releasing; run maintenance status again`);
      throw error;
    }
  }
}

export async function runMaintenance(ctx: PluginContext, positionals: string[]): Promise<number> {
  const [subcommand, ...rest] = positionals;
  switch (subcommand) {
    case 'status':
      return maintenanceStatus(ctx, rest);
    case 'release':
      return maintenanceRelease(ctx, rest);
    default:
      throw new UsageError(
        subcommand === undefined ? 'missing subcommand' : `unknown subcommand 'maintenance ${subcommand}'`,
      );
  }
}
