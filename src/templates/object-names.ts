/**
 * Names of the objects the operator creates. They are deterministic (the same inputs always give the
 * same name) so a restarted operator finds what it created before instead of creating it twice.
 */
import { createHash } from 'node:crypto';

const MAX_NAME = 63;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/**
 * Upstream Skyhook's `safeName`: parts joined by `-`, dots made dashes, cut to leave room for `-`
 * and 8 hex of the sha256 of the whole joined text, lower-cased.
 */
export function safeName(max: number, ...parts: string[]): string {
  const joined = parts.join('-').replaceAll('.', '-');
  return `${joined.slice(0, max - 9)}-${shortHash(joined)}`.toLowerCase();
}

/** Upstream's per-SCR, per-node metadata ConfigMap (reference/skyhook.md §3.8). */
export function nodeMetadataConfigMapName(skyhook: string, node: string): string {
  return safeName(253, skyhook, node, 'metadata');
}

/** A label value (≤ 63 chars): unchanged when it fits, else cut with a hash so distinct values stay distinct. */
export function labelValue(text: string): string {
  if (text.length <= MAX_NAME) return text;
  return `${text.slice(0, MAX_NAME - 9).replace(/[^A-Za-z0-9]+$/, '')}-${shortHash(text)}`;
}

/**
 * The Job of one NodeOp on one node: `<nodeop>-<node>-<hash>`, ≤ 63 chars (the Job controller copies
 * the name into a label). The hash covers the NodeOp's UID, so a NodeOp deleted and created again
 * under the same name gets new Jobs and never mistakes an old sentinel for its own.
 */
export function nodeJobName(nodeOpName: string, nodeOpUid: string, node: string): string {
  const readable = `${nodeOpName}-${node}`
    .replaceAll('.', '-')
    .slice(0, MAX_NAME - 9)
    .replace(/-+$/, '');
  return `${readable}-${shortHash(`${nodeOpUid}/${node}`)}`.toLowerCase();
}

/** The reboot pod that waits for `jobName`'s sentinel. */
export function rebootPodName(jobName: string): string {
  return `${jobName}-reboot`;
}
