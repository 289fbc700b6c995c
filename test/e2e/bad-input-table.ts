/**
 * The table of bad inputs beyond the CRD's own refusals (api.test.ts has those): each row is an
 * input, where the operator says so (a condition, an annotation or an Event), its reason, and a
 * part of its message that names the problem and the fix. bad-input.test.ts checks every row
 * against the real operator; docs/bad-input.md shows the same rows (a unit test keeps it in step).
 */

export type Signal = 'Skyhook condition' | 'Skyhook Event' | 'Node Event' | 'NodeOp node status';

export interface BadInputRow {
  id: string;
  category: string;
  input: string;
  signal: Signal;
  /** `<condition type>/<reason>` for conditions (an InputWarning's reason is MultipleWarnings when kinds mix), else the Event reason or node phase. */
  reason: string;
  /** Parts of the message, in order (split at `…`): the field or object at fault, and the fix. */
  message: string;
  /** What this branch changed: `new` (silent, looped or refused forever before), `clearer` (named the problem, not the fix), or `kept`. */
  change: 'new' | 'clearer' | 'kept';
}

const NS = 'skyhook.nvidia.com/nodeState_ns';
const malformed = (id: string, input: string, detail: string): BadInputRow => ({
  id,
  category: 'nodeState_ annotation',
  input,
  signal: 'Node Event',
  reason: 'NodeStateMalformed',
  change: 'clearer',
  message: `${NS} cannot be parsed (${detail}`,
});

export const BAD_INPUT_ROWS: BadInputRow[] = [
  malformed('ns-syntax', '`{not json`', 'Expected property name'),
  malformed('ns-empty', 'empty string', 'Unexpected end of JSON input'),
  malformed('ns-truncated', 'cut off mid-object', "Expected ',' or '}' after property value"),
  malformed('ns-trailing-comma', 'trailing comma', 'Expected double-quoted property name'),
  malformed('ns-array', '`[]`', 'not a JSON object'),
  malformed('ns-string', '`"complete"`', 'not a JSON object'),
  malformed('ns-number', '`42`', 'not a JSON object'),
  malformed('ns-entry-string', 'an entry that is a string', 'entry "pkg|1.0.0" is not an object'),
  malformed('ns-stage', 'stage `install`', 'entry "pkg|1.0.0": unknown stage "install"'),
  malformed('ns-state', 'state `done`', 'entry "pkg|1.0.0": unknown state "done"'),
  malformed('ns-restarts-negative', 'restarts `-1`', 'entry "pkg|1.0.0": restarts is not a non-negative integer'),
  malformed('ns-restarts-string', 'restarts `"3"`', 'entry "pkg|1.0.0": restarts is not a non-negative integer'),
  malformed('ns-image-array', 'image `["x"]`', 'entry "pkg|1.0.0": image is not a string'),
  {
    id: 'ns-condition',
    category: 'nodeState_ annotation',
    input: 'any of the above (SCR view)',
    signal: 'Skyhook condition',
    reason: 'NodeStateMalformed/ParseError',
    change: 'clearer',
    message: `nodeState annotation cannot be parsed on 13 node(s): ns-0, ns-1, ns-10, ns-11, ns-12 and 8 more; fix or delete annotation ${NS} on each`,
  },
  {
    id: 'status-annotation',
    category: 'node records',
    input: 'status_ annotation `garbage`',
    signal: 'Node Event',
    reason: 'NodeRecordRewritten',
    change: 'new',
    message:
      'annotation skyhook.nvidia.com/status_rec="garbage" cannot have been written by the operator and was rewritten from skyhook.nvidia.com/nodeState_rec',
  },
  {
    id: 'status-label',
    category: 'node records',
    input: 'status_ label `not-a-status`',
    signal: 'Node Event',
    reason: 'NodeRecordRewritten',
    change: 'new',
    message: 'label skyhook.nvidia.com/status_rec="not-a-status" cannot have been written by the operator',
  },
  {
    id: 'recorded-ops',
    category: 'node records',
    input: 'recordedOps_ `["all","done"]`',
    signal: 'Node Event',
    reason: 'NodeRecordRewritten',
    change: 'new',
    message: 'annotation skyhook.nvidia.com/recordedOps_rec cannot have been written by the operator',
  },
  {
    id: 'ignore-yes',
    category: 'labels and annotations',
    input: 'ignore label `yes`',
    signal: 'Skyhook condition',
    reason: 'InputWarning/InvalidNodeLabel',
    change: 'new',
    message:
      'label skyhook.nvidia.com/ignore="yes" on node(s) rec-3 is read as "false" (only "true" skips a node), so the node(s) are worked on; set it to "true" or "false"',
  },
  {
    id: 'ignore-empty',
    category: 'labels and annotations',
    input: 'ignore label empty',
    signal: 'Skyhook condition',
    reason: 'InputWarning/InvalidNodeLabel',
    change: 'new',
    message: 'label skyhook.nvidia.com/ignore="" on node(s) rec-4 is read as "false"',
  },
  {
    id: 'stale-cordon',
    category: 'labels and annotations',
    input: 'cordon_ghost (no such Skyhook)',
    signal: 'Skyhook condition',
    reason: 'InputWarning/StaleCordonClaim',
    change: 'new',
    message:
      'annotation skyhook.nvidia.com/cordon_ghost on node(s) rec-5 claims the cordon for a Skyhook that does not exist, so no Skyhook will uncordon the node(s); remove the annotation',
  },
  {
    id: 'pause-yes',
    category: 'labels and annotations',
    input: 'pause annotation `yes`',
    signal: 'Skyhook condition',
    reason: 'InputWarning/InvalidAnnotation',
    change: 'new',
    message:
      'annotation skyhook.nvidia.com/pause="yes" is read as "false" (only "true" counts); set it to "true" or remove it',
  },
  {
    id: 'disable-upper',
    category: 'labels and annotations',
    input: 'disable annotation `TRUE`',
    signal: 'Skyhook condition',
    reason: 'InputWarning/InvalidAnnotation',
    change: 'new',
    message: 'annotation skyhook.nvidia.com/disable="TRUE" is read as "false"',
  },
  {
    id: 'huge-configmap',
    category: 'spec the API server accepts',
    input: 'configMap of 1.1 MiB',
    signal: 'Skyhook condition',
    reason: 'InvalidSpec/InvalidSpec',
    change: 'new',
    message:
      'packages[big].configMap: 1153442 bytes, above the 1032192 a ConfigMap can hold (1 MiB less room for metadata); move the large files into the package image',
  },
  {
    id: 'configmap-key',
    category: 'spec the API server accepts',
    input: 'configMap key `conf/app.sh`',
    signal: 'Skyhook condition',
    reason: 'InvalidSpec/InvalidSpec',
    change: 'new',
    message: 'packages[pkg].configMap: key "conf/app.sh" is not a valid ConfigMap key',
  },
  {
    id: 'env-name',
    category: 'spec the API server accepts',
    input: 'env name `A=B`',
    signal: 'Skyhook condition',
    reason: 'InvalidSpec/InvalidSpec',
    change: 'new',
    message:
      'packages[pkg].env[0].name: "A=B" is not a valid environment variable name (printable ASCII without \'=\'); rename it',
  },
  {
    id: 'selector-key',
    category: 'spec the API server accepts',
    input: 'nodeSelectors key `bad key`',
    signal: 'Skyhook condition',
    reason: 'InvalidSpec/InvalidSpec',
    change: 'new',
    message: 'nodeSelectors.matchLabels: "bad key" is not a valid label key, so it matches nothing; fix the key',
  },
  {
    id: 'selector-value',
    category: 'spec the API server accepts',
    input: 'nodeSelectors value `a b`',
    signal: 'Skyhook condition',
    reason: 'InvalidSpec/InvalidSpec',
    change: 'new',
    message: 'nodeSelectors.matchLabels[pool]: "a b" is not a valid label value',
  },
  {
    id: 'pod-labels-key',
    category: 'spec the API server accepts',
    input: 'podNonInterruptLabels key `app name`',
    signal: 'Skyhook condition',
    reason: 'InvalidSpec/InvalidSpec',
    change: 'new',
    message: 'podNonInterruptLabels.matchExpressions[0].key: "app name" is not a valid label key',
  },
  {
    id: 'depends-cycle',
    category: 'spec the API server accepts',
    input: 'dependsOn cycle',
    signal: 'Skyhook condition',
    reason: 'InvalidSpec/InvalidSpec',
    change: 'kept',
    message: 'packages: dependsOn forms a cycle: first -> second -> first',
  },
  {
    id: 'glob-unmatched',
    category: 'spec the API server accepts',
    input: 'configInterrupts glob matching no key',
    signal: 'Skyhook condition',
    reason: 'InvalidSpec/InvalidSpec',
    change: 'kept',
    message: 'packages[pkg].configInterrupts: glob "*.conf" matches no configMap key',
  },
  {
    id: 'stage-timeout-us',
    category: 'spec the API server accepts',
    input: 'stageTimeout `500us`',
    signal: 'Skyhook Event',
    reason: 'StageFailed',
    change: 'new',
    message: 'Package [sleepy:1.0.0] stage [apply] failed on node [tiny-0]: …DeadlineExceeded',
  },
  {
    id: 'budget-count-above',
    category: 'budgets',
    input: 'interruptionBudget.count 1000 on 2 nodes',
    signal: 'Skyhook condition',
    reason: 'InputWarning/BudgetAboveNodes',
    change: 'new',
    message:
      'spec.interruptionBudget.count 1000 is above the 2 targeted node(s), so every node may be interrupted at once; lower it if that is not intended',
  },
  {
    id: 'budget-percent-zero',
    category: 'budgets',
    input: 'interruptionBudget.percent 0',
    signal: 'Skyhook condition',
    reason: 'InputWarning/BudgetRoundedUp',
    change: 'new',
    message:
      "spec.interruptionBudget.percent is 0, which upstream's rule reads as 1 node at a time; set count: 1 to say so",
  },
  {
    id: 'budget-count-zero',
    category: 'budgets',
    input: 'interruptionBudget.count 0',
    signal: 'Skyhook condition',
    reason: 'InputWarning/BudgetRoundedUp',
    change: 'new',
    message: 'spec.interruptionBudget.count is 0',
  },
  {
    id: 'policy-count-above',
    category: 'budgets',
    input: 'DeploymentPolicy budget count 50 on 1 node',
    signal: 'Skyhook condition',
    reason: 'InputWarning/BudgetAboveNodes',
    change: 'new',
    message:
      'DeploymentPolicy big-count compartment __default__: budget count 50 is above its 1 node(s) of this Skyhook',
  },
  {
    id: 'policy-missing',
    category: 'DeploymentPolicy',
    input: 'deploymentPolicy naming no policy (then created: recovers)',
    signal: 'Skyhook condition',
    reason: 'DeploymentPolicyNotFound/DeploymentPolicyNotFound',
    change: 'clearer',
    message: 'DeploymentPolicy "late-policy" not found; create it, or change spec.deploymentPolicy',
  },
  {
    id: 'policy-deleted',
    category: 'DeploymentPolicy',
    input: 'policy deleted mid-rollout (then recreated: recovers)',
    signal: 'Node Event',
    reason: 'DeploymentPolicyNotFound',
    change: 'clearer',
    message:
      'Skyhook [pol-del] waits: DeploymentPolicy "doomed" not found; create it, or change spec.deploymentPolicy (nothing starts until then, work in progress is kept)',
  },
  {
    id: 'selector-nothing',
    category: 'selectors',
    input: 'nodeSelectors matching no node',
    signal: 'Skyhook condition',
    reason: 'InputWarning/NoMatchingNodes',
    change: 'new',
    message:
      'spec.nodeSelectors matches no node, so nothing will be installed; check it against `kubectl get nodes --show-labels`',
  },
  {
    id: 'conflict-version',
    category: 'conflicting SCRs',
    input: 'two SCRs, package `tool` at 1.0.0 and 2.0.0, one node',
    signal: 'Skyhook condition',
    reason: 'InputWarning/PackageConflict',
    change: 'new',
    message:
      'Skyhook conflict-b installs package tool at version 2.0.0 (this one: 1.0.0), so the host ends with whichever runs last on node(s) conflict-0; install each package from one Skyhook, or give them disjoint nodeSelectors',
  },
  {
    id: 'conflict-same',
    category: 'conflicting SCRs',
    input: 'two SCRs, package `tool` at the same version, one node',
    signal: 'Skyhook condition',
    reason: 'InputWarning/PackageConflict',
    change: 'new',
    message: 'Skyhook dup-a also installs package tool:1.0.0, so it runs twice on node(s) dup-0',
  },
  {
    id: 'agent-image-space',
    category: 'images',
    input: 'agentImageOverride with a trailing space',
    signal: 'Skyhook condition',
    reason: 'InvalidSpec/InvalidSpec',
    change: 'new',
    message:
      'packages[pkg].agentImageOverride: "ghcr.io/x/agent:1.0 " contains whitespace, which no pod accepts; remove it',
  },
  {
    id: 'nodeop-env',
    category: 'NodeOp',
    input: 'NodeOp env name `A=B`',
    signal: 'NodeOp node status',
    reason: 'Failed',
    change: 'new',
    message:
      'the API server refused the Job built from this NodeOp: Invalid: …name: Invalid value: "A=B": a valid environment variable name…; fix that field of the NodeOp',
  },
  {
    id: 'package-image',
    category: 'images',
    input: 'package image that cannot be pulled',
    signal: 'Skyhook Event',
    reason: 'StageFailed',
    change: 'new',
    message:
      'Package [pkg:1.0.0] stage [apply] failed on node […]: Job … cannot make progress: pod … ImagePullBackOff: Back-off pulling image registry.invalid/pkg:1.0.0…; check that the image exists',
  },
  {
    id: 'agent-image',
    category: 'images',
    input: 'agentImageOverride that cannot be pulled',
    signal: 'Skyhook Event',
    reason: 'StageFailed',
    change: 'new',
    message:
      'Package [pkg:1.0.0] stage [apply] failed on node […]: Job … cannot make progress: pod … ImagePullBackOff: Back-off pulling image registry.invalid/agent:1…; check that the image exists',
  },
  {
    id: 'nodeop-image',
    category: 'NodeOp',
    input: 'NodeOp image that cannot be pulled',
    signal: 'NodeOp node status',
    reason: 'Failed',
    change: 'clearer',
    message: 'ImagePullBackOff: Back-off pulling image registry.invalid/tool:1: …; check that the image exists',
  },
];

export function badInputRow(id: string): BadInputRow {
  const row = BAD_INPUT_ROWS.find((candidate) => candidate.id === id);
  if (!row) throw new Error(`no bad-input row ${id}`);
  return row;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** The rows as the Markdown table of docs/bad-input.md. */
export function badInputTable(): string {
  const head = ['#', 'Category', 'Input', 'Where it is said', 'Reason', 'Message (part)'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  BAD_INPUT_ROWS.forEach((row, i) => {
    lines.push(
      `| ${[String(i + 1), row.category, row.input, row.signal, row.reason, row.message].map(cell).join(' | ')} |`,
    );
  });
  return lines.join('\n');
}
