/**
 * `package logs PACKAGE --skyhook NAME [--node …] [--stage …] [--tail N]`: every stage of a package
 * on a node runs as a Job, whose pods carry the labels of the stage (Skyhook, `<pkg>-<version>`,
 * stage, node). The pods are found by those labels, for every version of the package the SCR spec or
 * the nodes' state names (an upgrade or uninstall runs the old version), and each container's log is
 * printed under a header naming the Job, pod, node, stage and container, in the order they ran.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { CHILD_LABELS, KUBERNETES_NAMES } from '../../api/names.js';
import { readNodeSkyhookRecord } from '../../api/node-state.js';
import { nodeViewOf } from '../../controllers/skyhook/views/node-view.js';
import { labelValue } from '../../templates/object-names.js';
import { errorMessage } from '../../kube/client.js';
import type { PluginContext } from './context.js';
import { nodeMatcher } from './node-patterns.js';
import { CommandError } from './options.js';
import { nameOf } from '../../api/object-meta.js';
import { compareText } from '../../util/compare.js';

export interface ContainerLog {
  node: string;
  stage: string;
  job: string;
  pod: string;
  container: string;
  log: string;
}

/** The stage pods of the package (filtered by --node and --stage), or a CommandError naming the filters. */
export async function findStagePods(ctx: PluginContext, pkg: string, skyhook: string): Promise<V1Pod[]> {
  const { options } = ctx;
  const versions = await packageVersions(ctx, pkg, skyhook);
  const pods = stagePods(
    (
      await ctx.clients.core.listNamespacedPod({
        namespace: options.namespace,
        labelSelector: `${CHILD_LABELS.name}=${labelValue(skyhook)}`,
      })
    ).items,
    {
      packageLabels: new Set([...versions].map((version) => labelValue(`${pkg}-${version}`))),
      ...(options.node ? { node: nodeMatcher(options.node) } : {}),
      ...(options.stage ? { stage: options.stage } : {}),
    },
  );
  if (pods.length === 0) {
    const filters = [
      `Skyhook ${skyhook}`,
      `package ${pkg} (version ${[...versions].join(', ') || 'unknown'})`,
      ...(options.node ? [`node ${options.node}`] : []),
      ...(options.stage ? [`stage ${options.stage}`] : []),
    ];
    throw new CommandError(
      `no stage pods in namespace ${options.namespace} for ${filters.join(', ')}; finished Jobs are deleted after their TTL, and -n must name the operator's namespace`,
    );
  }
  return pods;
}

export async function runPackageLogs(ctx: PluginContext, pkg: string, skyhook: string): Promise<number> {
  const { options } = ctx;
  const pods = await findStagePods(ctx, pkg, skyhook);
  const logs: ContainerLog[] = [];
  for (const pod of pods) {
    for (const container of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      logs.push({ ...podIdentity(pod), container: container.name, log: await containerLog(ctx, pod, container.name) });
    }
  }
  if (options.output === 'json' || options.output === 'yaml') {
    const { stringify } = await import('yaml');
    console.log(options.output === 'json' ? JSON.stringify(logs, null, 2) : stringify(logs).trimEnd());
  } else {
    process.stdout.write(formatLogs(logs));
  }
  return 0;
}

/** The spec's version and every version the nodes have an entry for (old versions being upgraded or uninstalled). */
async function packageVersions(ctx: PluginContext, pkg: string, skyhook: string): Promise<Set<string>> {
  const versions = new Set<string>();
  try {
    const version = (await ctx.getSkyhook(skyhook)).spec.packages?.[pkg]?.version;
    if (version) versions.add(version);
  } catch (error) {
    // A deleted SCR's Jobs may still be there; the nodes' entries still name the versions.
    if (!(error instanceof CommandError)) throw error;
  }
  for (const node of await ctx.listNodes()) {
    for (const entry of Object.values(readNodeSkyhookRecord(nodeViewOf(node), skyhook).state))
      if (entry.name === pkg) versions.add(entry.version);
  }
  return versions;
}

export interface PodFilter {
  packageLabels: Set<string>;
  node?: (name: string) => boolean;
  stage?: string;
}

/** The pods of the package's stages, by node, then in the order they were created. */
export function stagePods(pods: V1Pod[], filter: PodFilter): V1Pod[] {
  return pods
    .filter((pod) => {
      const labels = pod.metadata?.labels ?? {};
      return (
        filter.packageLabels.has(labels[CHILD_LABELS.package] ?? '') &&
        (filter.stage === undefined || labels[CHILD_LABELS.stage] === filter.stage) &&
        (filter.node === undefined || filter.node(pod.spec?.nodeName ?? ''))
      );
    })
    .sort(
      (a, b) =>
        compareText(a.spec?.nodeName ?? '', b.spec?.nodeName ?? '') ||
        created(a) - created(b) ||
        compareText(nameOf(a), nameOf(b)),
    );
}

const created = (pod: V1Pod): number =>
  pod.metadata?.creationTimestamp ? new Date(pod.metadata.creationTimestamp).getTime() : 0;

export function podIdentity(pod: V1Pod): Omit<ContainerLog, 'container' | 'log'> {
  const labels = pod.metadata?.labels ?? {};
  return {
    node: pod.spec?.nodeName ?? '',
    stage: labels[CHILD_LABELS.stage] ?? '',
    job: labels[KUBERNETES_NAMES.jobNameLabel] ?? '',
    pod: nameOf(pod),
  };
}

async function containerLog(ctx: PluginContext, pod: V1Pod, container: string): Promise<string> {
  try {
    const tailLines = ctx.options.tail;
    return await ctx.clients.core.readNamespacedPodLog({
      name: nameOf(pod),
      namespace: ctx.options.namespace,
      container,
      ...(tailLines !== undefined ? { tailLines } : {}),
    });
  } catch (error) {
    // A container that never started (pending, pull failure) has no log yet: say so, go on with the others.
    return `(no log: ${errorMessage(error)})\n`;
  }
}

/** `==> node n · stage apply · job j · pod p · container c <==` above each log, as `tail` heads files. */
export function logHeader(entry: Omit<ContainerLog, 'log'>): string {
  const source = entry.job ? `job ${entry.job} · pod ${entry.pod}` : `pod ${entry.pod}`;
  return `==> node ${entry.node} · stage ${entry.stage} · ${source} · container ${entry.container} <==`;
}

export function formatLogs(logs: ContainerLog[]): string {
  return logs
    .map((entry) => {
      const body = entry.log === '' || entry.log.endsWith('\n') ? entry.log : `${entry.log}\n`;
      return `${logHeader(entry)}\n${body}`;
    })
    .join('\n');
}
