/**
 * What `skyhook sandbox` shows while a Skyhook rolls out: one line per node (its packages, stage,
 * state and a progress bar) and an overall line. Pure: it reads the node annotations and SCR status
 * the operator writes, the same ones `kubectl` users read.
 */
import type { PackageStage } from '../api/skyhook.js';
import { nodeAnnotations } from '../api/names.js';
import { parseNodeState, type NodeState } from '../api/node-state.js';

export interface ProgressNode {
  name: string;
  annotations?: Record<string, string>;
}

export interface ProgressSkyhook {
  name: string;
  status?: string;
  completeNodes?: string;
  /** Package name → whether it interrupts (adds the interrupt and post-interrupt stages). */
  packages: Record<string, { version: string; interrupts: boolean }>;
}

export interface NodeLine {
  node: string;
  text: string;
  fraction: number;
}

/** Install order of the stages a package goes through; interrupts add the last two. */
const INSTALL_STAGES: PackageStage[] = ['apply', 'config', 'interrupt', 'post-interrupt'];

/** Share of a package's install that is done, from its node-state entry. */
export function packageFraction(entry: NodeState[string] | undefined, interrupts: boolean): number {
  if (!entry) return 0;
  const total = interrupts ? 4 : 2;
  const index = INSTALL_STAGES.indexOf(entry.stage);
  if (index < 0) return entry.state === 'complete' ? 1 : 0; // upgrade/uninstall: done or not
  const done =
    index + (entry.state === 'complete' || entry.state === 'skipped' ? 1 : entry.state === 'in_progress' ? 0.5 : 0);
  return Math.min(1, done / total);
}

export function bar(fraction: number, width = 20): string {
  const filled = Math.round(Math.max(0, Math.min(1, fraction)) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

export function nodeLine(node: ProgressNode, skyhook: ProgressSkyhook): NodeLine {
  const annotations = node.annotations ?? {};
  const status = annotations[nodeAnnotations.status(skyhook.name)] ?? 'waiting';
  let state: NodeState = {};
  try {
    state = parseNodeState(annotations[nodeAnnotations.nodeState(skyhook.name)] ?? '{}', node.name, skyhook.name);
  } catch {
    return { node: node.name, text: `${node.name}  node state annotation unreadable`, fraction: 0 };
  }
  const packages = Object.entries(skyhook.packages);
  const parts = packages.map(([name, { version, interrupts }]) => {
    const entry = state[`${name}|${version}`];
    return {
      label: `${name}@${version} ${entry ? `${entry.stage}/${entry.state}` : 'pending'}`,
      fraction: status === 'complete' ? 1 : packageFraction(entry, interrupts),
    };
  });
  const fraction = parts.length ? parts.reduce((sum, p) => sum + p.fraction, 0) / parts.length : 1;
  return {
    node: node.name,
    text: `${node.name.padEnd(12)} ${status.padEnd(11)} ${bar(fraction)} ${String(Math.round(fraction * 100)).padStart(3)}%  ${parts.map((p) => p.label).join(', ')}`,
    fraction,
  };
}

export function overallLine(skyhook: ProgressSkyhook, lines: NodeLine[], elapsedMs: number): string {
  const fraction = lines.length ? lines.reduce((sum, l) => sum + l.fraction, 0) / lines.length : 0;
  return `${skyhook.name}: ${(skyhook.status ?? 'pending').padEnd(11)} ${bar(fraction)} ${String(Math.round(fraction * 100)).padStart(3)}%  ${skyhook.completeNodes ?? `0/${lines.length}`} nodes complete  ${(elapsedMs / 1000).toFixed(1)} s`;
}
