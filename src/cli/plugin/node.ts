/**
 * `node list|status|ignore|unignore|reset`: nodes as Skyhooks see them. `ignore` sets the label
 * `skyhook.nvidia.com/ignore=true` (every SCR skips the node, status `blocked`) and `unignore`
 * removes it; `reset` removes one SCR's state from the matching nodes (see node-reset.ts).
 */
import type { V1Node } from '@kubernetes/client-node';
import { IGNORE_NODE_LABEL } from '../../api/names.js';
import type { Skyhook } from '../../api/skyhook.js';
import { commitChanges, type Change, type ChangeSet } from './changes.js';
import type { PluginContext } from './context.js';
import { nodeMatcher } from './node-patterns.js';
import { nodeResetChange } from './node-reset.js';
import {
  formatPackage,
  skyhookConcernsNode,
  skyhooksOnNode,
  summarizeNode,
  type NodeSkyhookSummary,
} from './node-summary.js';
import { CommandError, requirePositionals, requireSkyhookFlag, UsageError } from './options.js';
import { render, type Column } from './output.js';
import { nameOf } from '../../api/object-meta.js';

export const NODE_HELP = `Usage: skyhook node <subcommand> [options]

  list --skyhook NAME                   nodes the Skyhook selects or has state on, with their status
  status [NODE|REGEX] [--skyhook NAME]  each node's status and packages per Skyhook
  ignore NODE|REGEX                     label the nodes ${IGNORE_NODE_LABEL}=true: every Skyhook skips them
  unignore NODE|REGEX                   remove that label
  reset NODE|REGEX --skyhook NAME       remove the Skyhook's state from the nodes (it starts them over; asks first)

A node argument with regular-expression characters is an anchored regular expression, else an exact name.`;

const yesNo = (value: boolean): string => (value ? 'yes' : 'no');
const nodeName = (s: NodeSkyhookSummary): string => `node/${s.node}`;

const NODE_COLUMNS: Column<NodeSkyhookSummary>[] = [
  { header: 'NODE', value: (s) => s.node },
  { header: 'SKYHOOK', value: (s) => s.skyhook || '-' },
  { header: 'STATUS', value: (s) => s.status },
  { header: 'PACKAGES', value: (s) => s.packagesComplete },
  { header: 'IGNORED', value: (s) => yesNo(s.ignored) },
  { header: 'CORDONED', value: (s) => yesNo(s.cordoned) },
  { header: 'STATE', value: (s) => s.packages.map(formatPackage).join(', ') || '-', wide: true },
];

export async function runNode(ctx: PluginContext, positionals: string[]): Promise<number> {
  const [subcommand, ...rest] = positionals;
  switch (subcommand) {
    case 'list':
      requirePositionals(rest, []);
      return nodeList(ctx);
    case 'status':
      return nodeStatus(ctx, rest);
    case 'ignore':
    case 'unignore':
      return commitChanges(
        ctx,
        ignoreChanges(await matchingNodes(ctx, requirePositionals(rest, ['node'])[0]!), subcommand === 'ignore'),
      );
    case 'reset': {
      const [pattern] = requirePositionals(rest, ['node']);
      const skyhook = requireSkyhookFlag(ctx.options);
      return commitChanges(ctx, resetChanges(await matchingNodes(ctx, pattern!), skyhook));
    }
    default:
      throw new UsageError(subcommand === undefined ? 'missing subcommand' : `unknown subcommand 'node ${subcommand}'`);
  }
}

async function nodeList(ctx: PluginContext): Promise<number> {
  const skyhook = await ctx.getSkyhook(requireSkyhookFlag(ctx.options));
  const nodes = (await ctx.listNodes()).filter((node) => skyhookConcernsNode(node, skyhook));
  console.log(
    render(
      nodes.map((node) => summarizeNode(node, skyhook)),
      NODE_COLUMNS.filter((c) => c.header !== 'SKYHOOK'),
      ctx.options.output,
      nodeName,
    ),
  );
  return 0;
}

async function nodeStatus(ctx: PluginContext, positionals: string[]): Promise<number> {
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  const nodes = positionals.length > 0 ? await matchingNodes(ctx, positionals[0]!) : await ctx.listNodes();
  const only = ctx.options.skyhook;
  const skyhooks = only ? [await ctx.getSkyhook(only)] : await ctx.listSkyhooks();
  const byName = new Map(skyhooks.map((scr) => [nameOf(scr), scr]));
  const rows = nodes.flatMap((node) => nodeRows(node, only ? [only] : skyhooksOnNode(node), byName));
  console.log(render(rows, NODE_COLUMNS, ctx.options.output, nodeName));
  return 0;
}

/** One row per SCR with state on the node; one row without an SCR when there is none. */
function nodeRows(node: V1Node, names: string[], skyhooks: Map<string, Skyhook>): NodeSkyhookSummary[] {
  const known = names.map((name) => skyhooks.get(name) ?? ({ metadata: { name }, spec: {} } as Skyhook));
  if (known.length > 0) return known.map((scr) => summarizeNode(node, scr));
  return [
    { ...summarizeNode(node, { metadata: { name: '' }, spec: {} } as Skyhook), status: '-', packagesComplete: '-' },
  ];
}

async function matchingNodes(ctx: PluginContext, pattern: string): Promise<V1Node[]> {
  const matches = nodeMatcher(pattern);
  const nodes = (await ctx.listNodes()).filter((node) => matches(nameOf(node)));
  if (nodes.length === 0) throw new CommandError(`no node matches '${pattern}'; \`kubectl get nodes\` lists them`);
  return nodes;
}

export function ignoreChanges(nodes: V1Node[], ignore: boolean): ChangeSet {
  const changes: Change[] = [];
  const notes: string[] = [];
  for (const node of nodes) {
    const name = nameOf(node);
    const ignored = node.metadata?.labels?.[IGNORE_NODE_LABEL] === 'true';
    if (ignored === ignore) {
      notes.push(`node ${name} is already ${ignore ? 'ignored' : 'not ignored'}`);
      continue;
    }
    changes.push({
      target: { kind: 'Node', name },
      patch: { metadata: { labels: { [IGNORE_NODE_LABEL]: ignore ? 'true' : null } } },
      description: ignore ? `set label ${IGNORE_NODE_LABEL}="true"` : `remove label ${IGNORE_NODE_LABEL}`,
    });
  }
  return { action: `${ignore ? 'ignore' : 'unignore'} ${changes.length} node(s)`, destructive: false, changes, notes };
}

export function resetChanges(nodes: V1Node[], skyhook: string): ChangeSet {
  const changes = nodes.flatMap((node) => nodeResetChange(node, skyhook) ?? []);
  const untouched = nodes.filter((node) => !changes.some((change) => change.target.name === node.metadata?.name));
  return {
    action: `reset Skyhook ${skyhook} on ${changes.length} node(s)`,
    destructive: true,
    changes,
    notes: untouched.map((node) => `node ${nameOf(node)} has no state of Skyhook ${skyhook}`),
  };
}
