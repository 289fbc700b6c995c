/**
 * docs/reference/names.md: every label, annotation, finalizer, condition type and Event reason of
 * src/api/names.ts (and the wait reasons the operator writes), with the comment the source gives it.
 * Values come from the module itself; descriptions from its doc comments, so renaming or
 * re-documenting a name changes the page and the docs test asks for `npm run gen:docs`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as names from '../../src/api/names.js';
import { CLUSTER_BUDGET_REASON } from '../../src/controllers/disruption/shared-arbiter.js';
import { BLOCKER_REASONS } from '../../src/controllers/maintenance/blockers.js';
import { OUTSIDE_WINDOW_REASON } from '../../src/controllers/skyhook/plan/maintenance-windows.js';
import { POD_WAIT, POD_WAIT_LONG, PRIORITY_WAIT } from '../../src/controllers/skyhook/plan/node-holds.js';
import { STAGE_FAILED_REASON } from '../../src/controllers/skyhook/write/failed-stage-report.js';
import { PACKAGE_TRUST_REFUSED } from '../../src/controllers/skyhook/plan/package-trust.js';
import { STUCK_WAITING_REASONS } from '../../src/jobs/job-progress.js';

/** Reasons the controllers name in one constant each: value → where a user meets it. */
function controllerReasons(): ReadonlyArray<readonly [string, string]> {
  return [
    [PRIORITY_WAIT, '`waiting_<skyhook>`: a Skyhook of lower priority number is not complete on the node'],
    [CLUSTER_BUDGET_REASON, '`waiting_<skyhook>`, NodeOp node message, Event: a DisruptionBudget is full'],
    [OUTSIDE_WINDOW_REASON, '`waiting_<skyhook>`, Event, MaintenancePolicy queue: no maintenance window is open'],
    [POD_WAIT, '`waiting_<skyhook>`, condition `Blocked`, Event: non-interruptible pods hold the interrupt'],
    [POD_WAIT_LONG, 'condition `Blocked`, Warning Event: that wait passed `podNonInterruptWarnAfter`'],
    [
      STAGE_FAILED_REASON,
      "Warning Event on the Skyhook: a stage failed; the message names the container's exit and has the last lines of the step's output",
    ],
    [
      PACKAGE_TRUST_REFUSED,
      '`waiting_<skyhook>`, condition, Warning Event: a package image failed its PackageTrustPolicy (Enforce); reasons Unsigned, UnknownKey, DigestMismatch, Unreachable',
    ],
    ['PackageTrustWarning', 'Warning Event: a package image failed a PackageTrustPolicy in Warn mode and runs anyway'],
    ['PackageTrustVerified', 'Event: a package image is signed by a trusted key; its stages run pinned to the digest'],
    ...Object.values(BLOCKER_REASONS).map(
      (reason) => [reason, 'MaintenancePolicy queue: a reboot blocker holds the node'] as const,
    ),
    ...[...STUCK_WAITING_REASONS].map(
      (reason) => [reason, 'a stage pod stuck this long fails the node (`NODEOP_STUCK_POD_TIMEOUT_SECONDS`)'] as const,
    ),
  ];
}

/** The groups of names.ts a user meets, with the heading they get. */
const GROUPS: ReadonlyArray<readonly [exportName: string, heading: string]> = [
  ['SKYHOOK_ANNOTATIONS', 'Annotations you put on a Skyhook'],
  ['POD_ANNOTATIONS', 'Annotations a workload puts on its pods'],
  ['nodeAnnotations', 'Node annotations, one per Skyhook (`<skyhook>` is its name)'],
  ['NODE_ANNOTATION_PREFIXES', 'Node annotation prefixes'],
  ['RUNTIME_REQUIRED_CORDON_ANNOTATION', 'Runtime-required cordon annotation'],
  ['nodeLabels', 'Node labels'],
  ['IGNORE_NODE_LABEL', 'Ignore label'],
  ['TEST_NODE_LABEL', 'Label of the samples'],
  ['DEFAULT_RUNTIME_REQUIRED_TAINT', 'Runtime-required taint (default)'],
  ['nodeConditionTypes', 'Node conditions, one pair per Skyhook'],
  ['SKYHOOK_CONDITIONS', 'Skyhook condition types'],
  ['SKYHOOK_FINALIZER', 'Skyhook finalizer'],
  ['CHILD_LABELS', "Labels on the operator's ConfigMaps, NodeOps, Jobs and pods"],
  ['CHILD_ANNOTATIONS', "Annotations on the operator's children"],
  ['STAGE_OP_ANNOTATIONS', 'Annotations on stage NodeOps'],
  ['STAGE_MOUNTS', 'Paths inside a stage pod'],
  ['NODEOP_NAMES', 'NodeOp names (finalizer, labels, annotations)'],
  ['NODEOP_CONDITIONS', 'NodeOp condition types'],
  ['NODEOP_EVENT_REASONS', 'NodeOp Event reasons'],
  ['DEFAULT_COMPARTMENT', 'Default compartment'],
];

/** `key` → its doc comment, for the object literal of `export const <name>` (or the const itself under ''). */
export function docComments(source: string, exportName: string): Map<string, string> {
  const comments = new Map<string, string>();
  const start = source.indexOf(`export const ${exportName} `);
  if (start < 0) return comments;
  const before = source.slice(0, start).trimEnd();
  const own = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/$/.exec(before);
  if (own) comments.set('', clean(own[1]!));
  const end = source.indexOf('\n}', start);
  const body = source.slice(start, end < 0 ? undefined : end);
  for (const match of body.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*(\w+)\s*:/g))
    comments.set(match[2]!, clean(match[1]!));
  return comments;
}

function clean(comment: string): string {
  return comment
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, '').trim())
    .join(' ')
    .trim();
}

function shown(value: unknown): string {
  if (typeof value === 'function') return (value as (arg: string) => string)('<skyhook>');
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.join(', ');
  if (value && typeof value === 'object') {
    const taint = value as { key?: string; value?: string; effect?: string };
    if (taint.key && taint.effect) return `${taint.key}=${taint.value ?? ''}:${taint.effect}`;
  }
  return JSON.stringify(value);
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

export function renderNamesPage(repoRoot: string): string {
  const source = readFileSync(join(repoRoot, 'src/api/names.ts'), 'utf8');
  const all = names as unknown as Record<string, unknown>;
  const lines = [
    '# Names: labels, annotations, conditions, Events',
    '',
    '<!-- Generated from src/api/names.ts by `npm run gen:docs`; do not edit. -->',
    '',
    `Every name the operator reads or writes on objects outside its own kinds. The prefix is \`${names.PREFIX}\`, ` +
      'as upstream Skyhook writes it; the names marked "Ours" are this operator\'s additions.',
    '',
  ];
  for (const [exportName, heading] of GROUPS) {
    const value = all[exportName];
    if (value === undefined) throw new Error(`src/api/names.ts exports no ${exportName}: update GROUPS`);
    const comments = docComments(source, exportName);
    lines.push(`## ${heading}`, '');
    if (comments.get('')) lines.push(comments.get('')!, '');
    const isMap = typeof value === 'object' && value !== null && !Array.isArray(value) && !('effect' in value);
    if (!isMap) {
      lines.push(`\`${shown(value)}\``, '');
      continue;
    }
    lines.push('| name | value | meaning |', '| --- | --- | --- |');
    for (const [key, entry] of Object.entries(value as Record<string, unknown>))
      lines.push(`| ${key} | \`${cell(shown(entry))}\` | ${cell(comments.get(key) ?? '')} |`);
    lines.push('');
  }
  lines.push(
    '## Wait and Event reasons of the controllers',
    '',
    'The reasons a user meets most; the troubleshooting runbook says what to do about each.',
    '',
    '| reason | where |',
    '| --- | --- |',
    ...controllerReasons().map(([reason, where]) => `| \`${reason}\` | ${cell(where)} |`),
  );
  return `${lines.join('\n').trimEnd()}\n`;
}
