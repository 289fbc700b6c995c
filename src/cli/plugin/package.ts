/**
 * `package status|rerun|logs`: one package of one Skyhook across nodes. `rerun` rewrites the node's
 * `nodeState_<scr>` annotation: without --stage the package's entry is removed (the operator runs it
 * again from the start), with --stage the entry becomes `{stage, in_progress}` (that stage runs
 * again). The write carries the node's resourceVersion, so a concurrent operator write is never lost.
 */
import type { V1Node } from '@kubernetes/client-node';
import { nodeAnnotations } from '../../api/names.js';
import type { PackageStage, Skyhook } from '../../api/skyhook.js';
import {
  nodeStateAnnotations,
  packageKey,
  readNodeSkyhookRecord,
  serializeNodeState,
  type NodeState,
} from '../../api/node-state.js';
import { nodeViewOf } from '../../controllers/skyhook/views/node-view.js';
import { commitChanges, type Change, type ChangeSet } from './changes.js';
import type { PluginContext } from './context.js';
import { nodeMatcher } from './node-patterns.js';
import { CommandError, requirePositionals, requireSkyhookFlag, UsageError } from './options.js';
import { render, type Column } from './output.js';
import { findStagePods, runPackageLogs } from './package-logs.js';
import { followLogs } from './package-logs-follow.js';
import { nameOf } from '../../api/object-meta.js';

export const RERUN_STAGES = [
  'apply',
  'config',
  'interrupt',
  'post-interrupt',
] as const satisfies readonly PackageStage[];

export const PACKAGE_HELP = `Usage: skyhook package <subcommand> PACKAGE --skyhook NAME [options]

  status PACKAGE --skyhook NAME [--node NODE|REGEX]   the package's stage and state on each node
  rerun PACKAGE --skyhook NAME --node NODE|REGEX [--stage ${RERUN_STAGES.join('|')}]
                                                      run the package again on the nodes (asks first)
  logs PACKAGE --skyhook NAME [--node NODE|REGEX] [--stage STAGE] [--tail N] [-f]
                                                      the logs of the package's stage Jobs (-f: follow them as they run)
  verify IMAGE --key FILE.pub [--key ...]             check the image's cosign signature against the keys (no cluster;
                                                      \`skyhook package verify --help\` lists its options)`;

export interface PackageNodeRow {
  node: string;
  package: string;
  version: string;
  stage: string;
  state: string;
  restarts: number;
  image: string;
}

const COLUMNS: Column<PackageNodeRow>[] = [
  { header: 'NODE', value: (r) => r.node },
  { header: 'PACKAGE', value: (r) => r.package },
  { header: 'VERSION', value: (r) => r.version },
  { header: 'STAGE', value: (r) => r.stage },
  { header: 'STATE', value: (r) => r.state },
  { header: 'RESTARTS', value: (r) => String(r.restarts) },
  { header: 'IMAGE', value: (r) => r.image, wide: true },
];

export async function runPackage(ctx: PluginContext, positionals: string[]): Promise<number> {
  const [subcommand, ...rest] = positionals;
  if (subcommand !== 'status' && subcommand !== 'rerun' && subcommand !== 'logs') {
    throw new UsageError(
      subcommand === undefined ? 'missing subcommand' : `unknown subcommand 'package ${subcommand}'`,
    );
  }
  const [pkg] = requirePositionals(rest, ['package']);
  const skyhookName = requireSkyhookFlag(ctx.options);
  if (subcommand === 'logs')
    return ctx.options.follow
      ? followLogs(ctx, await findStagePods(ctx, pkg!, skyhookName))
      : runPackageLogs(ctx, pkg!, skyhookName);
  const skyhook = await ctx.getSkyhook(skyhookName);
  const nodes = await ctx.listNodes();
  if (subcommand === 'status') {
    const matches = ctx.options.node ? nodeMatcher(ctx.options.node) : () => true;
    const rows = packageRows(
      nodes.filter((node) => matches(nameOf(node))),
      skyhookName,
      pkg!,
    );
    console.log(render(rows, COLUMNS, ctx.options.output, (r) => `node/${r.node}`));
    return 0;
  }
  if (!ctx.options.node) throw new UsageError('--node NODE|REGEX is required: the nodes to run the package on again');
  const stage = ctx.options.stage;
  if (stage !== undefined && !isRerunStage(stage))
    throw new UsageError(`--stage must be one of ${RERUN_STAGES.join(', ')}, not '${stage}'`);
  const matches = nodeMatcher(ctx.options.node);
  const targets = nodes.filter((node) => matches(nameOf(node)));
  if (targets.length === 0)
    throw new CommandError(`no node matches '${ctx.options.node}'; \`kubectl get nodes\` lists them`);
  return commitChanges(ctx, rerunChanges(targets, skyhook, pkg!, stage));
}

const isRerunStage = (stage: string): stage is (typeof RERUN_STAGES)[number] =>
  (RERUN_STAGES as readonly string[]).includes(stage);

/** Every entry of the package (any version) on the nodes that have one. */
export function packageRows(nodes: V1Node[], skyhook: string, pkg: string): PackageNodeRow[] {
  return nodes.flatMap((node) => {
    const view = nodeViewOf(node);
    const { state } = readNodeSkyhookRecord(view, skyhook);
    return Object.keys(state)
      .sort()
      .map((key) => state[key]!)
      .filter((entry) => entry.name === pkg)
      .map((entry) => ({
        node: view.name,
        package: entry.name,
        version: entry.version,
        stage: entry.stage,
        state: entry.state,
        restarts: entry.restarts ?? 0,
        image: entry.image,
      }));
  });
}

export function rerunChanges(
  nodes: V1Node[],
  skyhook: Skyhook,
  pkg: string,
  stage: PackageStage | undefined,
): ChangeSet {
  const scr = nameOf(skyhook);
  const spec = skyhook.spec.packages?.[pkg];
  if (!spec)
    throw new CommandError(
      `Skyhook ${scr} has no package '${pkg}'; its packages: ${Object.keys(skyhook.spec.packages ?? {}).join(', ') || 'none'}`,
    );
  const key = packageKey(pkg, spec.version);
  const changes: Change[] = [];
  const notes: string[] = [];
  for (const node of nodes) {
    const view = nodeViewOf(node);
    const record = readNodeSkyhookRecord(view, scr);
    if (record.malformed) {
      notes.push(`node ${view.name}: ${record.malformed.message}; \`skyhook node reset\` clears it`);
      continue;
    }
    const entry = record.state[key];
    let next: NodeState;
    if (stage === undefined) {
      if (!entry) {
        notes.push(`node ${view.name} has no entry for ${pkg}:${spec.version}; nothing to rerun`);
        continue;
      }
      next = Object.fromEntries(Object.entries(record.state).filter(([k]) => k !== key));
    } else {
      next = {
        ...record.state,
        [key]: {
          name: pkg,
          version: spec.version,
          image: entry?.image ?? spec.image,
          ...(spec.containerSHA ? { containerSHA: spec.containerSHA } : {}),
          stage,
          state: 'in_progress',
        },
      };
    }
    const annotation = nodeAnnotations.nodeState(scr);
    changes.push({
      target: { kind: 'Node', name: view.name },
      patch: {
        metadata: {
          resourceVersion: node.metadata?.resourceVersion,
          annotations: nodeStateAnnotations(scr, serializeNodeState(next)),
        },
      },
      description:
        stage === undefined
          ? `remove ${pkg}:${spec.version} from annotation ${annotation}`
          : `set ${pkg}:${spec.version} to stage ${stage}, state in_progress in annotation ${annotation}`,
    });
  }
  return {
    action: `rerun package ${pkg} of Skyhook ${scr} on ${changes.length} node(s)`,
    destructive: true,
    changes,
    notes,
  };
}
