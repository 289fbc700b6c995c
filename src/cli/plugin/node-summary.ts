/**
 * One node as the plugin shows it for one Skyhook, read from the node's annotations and labels
 * through the operator's own parsers and package rules (so "complete" means what it means to the
 * operator): status, how many spec packages are complete, each package entry, ignore and cordon.
 */
import type { V1Node } from '@kubernetes/client-node';
import { IGNORE_NODE_LABEL, NODE_ANNOTATION_PREFIXES, nodeAnnotations } from '../../api/names.js';
import type { PackageStatus, Skyhook } from '../../api/skyhook.js';
import { readNodeSkyhookRecord } from '../../api/node-state.js';
import { hasInterrupt, isPackageComplete, namedPackages } from '../../controllers/skyhook/plan/package-rules.js';
import { nodeViewOf } from '../../controllers/skyhook/views/node-view.js';
import { selectorMatches } from '../../api/label-selector.js';
import { nameOf } from '../../api/object-meta.js';

export interface NodeSkyhookSummary {
  node: string;
  skyhook: string;
  /** `status_<scr>` as the operator last wrote it; `unknown` before it has; `malformed` if nodeState cannot be read. */
  status: string;
  /** `<complete>/<spec packages>`. */
  packagesComplete: string;
  ignored: boolean;
  cordoned: boolean;
  /** This SCR cordoned the node (`cordon_<scr>`). */
  cordonedBySkyhook: boolean;
  packages: PackageStatus[];
}

export function summarizeNode(node: V1Node, skyhook: Skyhook): NodeSkyhookSummary {
  const view = nodeViewOf(node);
  const name = nameOf(skyhook);
  const record = readNodeSkyhookRecord(view, name);
  const configUpdates = skyhook.status?.configUpdates ?? {};
  const specPackages = namedPackages(skyhook.spec.packages);
  const complete = specPackages.filter((pkg) =>
    isPackageComplete(record.state[`${pkg.name}|${pkg.version}`], pkg, hasInterrupt(pkg, configUpdates[pkg.name])),
  ).length;
  return {
    node: view.name,
    skyhook: name,
    status: record.malformed ? 'malformed' : (record.status ?? 'unknown'),
    packagesComplete: `${complete}/${specPackages.length}`,
    ignored: view.labels[IGNORE_NODE_LABEL] === 'true',
    cordoned: node.spec?.unschedulable === true,
    cordonedBySkyhook: view.annotations[nodeAnnotations.cordon(name)] === 'true',
    packages: Object.keys(record.state)
      .sort()
      .map((key) => record.state[key]!),
  };
}

/** The SCR selects the node, or has left state on it. */
export function skyhookConcernsNode(node: V1Node, skyhook: Skyhook): boolean {
  const name = nameOf(skyhook);
  const annotations = node.metadata?.annotations ?? {};
  return (
    selectorMatches(skyhook.spec.nodeSelectors, node.metadata?.labels ?? {}) ||
    annotations[nodeAnnotations.nodeState(name)] !== undefined ||
    annotations[nodeAnnotations.status(name)] !== undefined
  );
}

/** Names of the SCRs with state on the node, from its `nodeState_`/`status_` annotations. */
export function skyhooksOnNode(node: V1Node): string[] {
  const names = new Set<string>();
  for (const key of Object.keys(node.metadata?.annotations ?? {})) {
    for (const prefix of [NODE_ANNOTATION_PREFIXES.nodeState, NODE_ANNOTATION_PREFIXES.status]) {
      if (key.startsWith(prefix)) names.add(key.slice(prefix.length));
    }
  }
  return [...names].sort();
}

export const formatPackage = (entry: PackageStatus): string =>
  `${entry.name}:${entry.version} ${entry.stage}/${entry.state}${entry.restarts ? ` (restarts ${entry.restarts})` : ''}`;
