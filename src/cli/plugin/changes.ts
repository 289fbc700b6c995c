/**
 * Every command that changes the cluster first computes its changes as merge patches (pure), then
 * commits them here: printed instead of sent with --dry-run, confirmed first when destructive
 * (--yes skips the question; without a terminal to ask on, the command refuses), then applied in
 * order, each printed as it lands.
 */
import { createInterface } from 'node:readline/promises';
import { API_GROUP } from '../../api/names.js';
import { sharedClaim } from '../../jobs/cordon/claims.js';
import { releaseCordon } from '../../jobs/cordon/write.js';
import { FIELD_MANAGER, MERGE_PATCH, mergePatchNode } from '../../kube/client.js';
import type { PluginContext } from './context.js';
import { CommandError } from './options.js';
import { render, type Column } from './output.js';

export type ChangeTarget =
  /**
   * `releaseClaims`: the change is a cordon release under those shared claims, decided again on the
   * node as it is when applied (jobs/cordon/write.ts); `patch` then only shows what it would do now.
   */
  | { kind: 'Node'; name: string; releaseClaims?: string[] }
  | { kind: 'Skyhook'; name: string; subresource?: 'status' }
  | { kind: 'Lease'; namespace: string; name: string };

export interface Change {
  target: ChangeTarget;
  /** JSON merge patch (`null` removes a key). */
  patch: object;
  /** What the change does, e.g. `remove annotation skyhook.nvidia.com/pause from Skyhook demo`. */
  description: string;
}

export interface ChangeSet {
  /** For the confirmation question and the refusal, e.g. `reset Skyhook demo on 3 node(s)`. */
  action: string;
  destructive: boolean;
  changes: Change[];
  /** Why some targets need no change (already in the wanted state); printed to stderr. */
  notes?: string[];
}

interface ChangeRecord {
  kind: string;
  name: string;
  subresource?: string;
  description: string;
  patch: object;
  applied: boolean;
}

const COLUMNS: Column<ChangeRecord>[] = [
  { header: 'KIND', value: (r) => r.kind },
  { header: 'NAME', value: (r) => r.name },
  { header: 'CHANGE', value: (r) => (r.applied ? r.description : `(dry run) would ${r.description}`) },
];

export type Confirm = (question: string) => Promise<boolean>;

/** Asks on the terminal; undefined when there is none (stdin or stdout not a TTY). */
export function terminalConfirm(): Confirm | undefined {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return undefined;
  return async (question) => {
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    try {
      return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
    } finally {
      rl.close();
    }
  };
}

/** `-o name`: the changed object as kubectl names it (`node/<name>`, `skyhook.skyhook.nvidia.com/<name>`, `lease.coordination.k8s.io/<name>`). */
const changeName = (record: ChangeRecord): string =>
  record.kind === 'Node'
    ? `node/${record.name}`
    : record.kind === 'Lease'
      ? `lease.coordination.k8s.io/${record.name}`
      : `skyhook.${API_GROUP}/${record.name}`;

export async function commitChanges(
  ctx: PluginContext,
  set: ChangeSet,
  confirm: Confirm | undefined = terminalConfirm(),
): Promise<number> {
  for (const note of set.notes ?? []) console.error(note);
  const { options } = ctx;
  if (set.changes.length === 0) {
    console.error(`nothing to change: ${set.action}`);
    if (options.output === 'json' || options.output === 'yaml') console.log(render([], COLUMNS, options.output));
    return 0;
  }
  const records = set.changes.map(
    (change): ChangeRecord => ({
      kind: change.target.kind,
      name: change.target.name,
      ...(change.target.kind === 'Skyhook' && change.target.subresource
        ? { subresource: change.target.subresource }
        : {}),
      description: change.description,
      patch: change.patch,
      applied: false,
    }),
  );
  if (options.dryRun) {
    console.log(render(records, COLUMNS, options.output, changeName));
    return 0;
  }
  if (set.destructive && !options.yes) {
    if (!confirm) {
      throw new CommandError(
        `refusing to ${set.action} without confirmation (no terminal to ask on): pass --yes (-y) to confirm, or --dry-run to see the changes first`,
      );
    }
    console.error(set.changes.map((change) => `  ${change.description}`).join('\n'));
    if (!(await confirm(`${set.action}?`))) throw new CommandError(`not confirmed; nothing changed`);
  }
  for (const [i, change] of set.changes.entries()) {
    await applyChange(ctx, change);
    records[i]!.applied = true;
  }
  console.log(render(records, COLUMNS, options.output, changeName));
  return 0;
}

async function applyChange(ctx: PluginContext, { target, patch }: Change): Promise<void> {
  if (target.kind === 'Node' && target.releaseClaims) {
    for (const claim of target.releaseClaims)
      await releaseCordon(ctx.clients.core, target.name, sharedClaim(claim), { conflictAttempts: 5 });
  } else if (target.kind === 'Node') await mergePatchNode(ctx.clients.core, target.name, patch);
  else if (target.kind === 'Lease')
    await ctx.clients.coordination.patchNamespacedLease(
      { name: target.name, namespace: target.namespace, body: patch, fieldManager: FIELD_MANAGER },
      MERGE_PATCH,
    );
  else if (target.subresource === 'status')
    await ctx.skyhooks.patchStatus(target.name, (patch as { status: object }).status);
  else await ctx.skyhooks.mergePatch(target.name, patch);
}
