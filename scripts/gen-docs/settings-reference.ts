/**
 * docs/reference/settings.md: the operator's flags (its --help), every environment setting it reads
 * (chart/values.yaml's `settings`, where each has its default; the NodeOp controller's meanings from
 * NODEOP_ENV_DOC) and the node agent's environment (AGENT_ENV_DOC).
 */
import { AGENT_ENV_DOC } from '../../src/agent/settings.js';
import { NODEOP_ENV_DOC } from '../../src/templates/nodeop-settings.js';
import { valueRows } from './chart-values.js';
import { helpOf } from './cli-reference.js';

const cell = (text: string): string => text.replace(/\|/g, '\\|');

export function renderSettingsPage(repoRoot: string): string {
  const nodeOpMeaning = new Map(NODEOP_ENV_DOC.map(([name, , meaning]) => [name, meaning]));
  const lines = [
    '# Operator settings and flags',
    '',
    '<!-- Generated from chart/values.yaml, src/templates/nodeop-settings.ts, src/agent/settings.ts and `skyhook operator --help` by `npm run gen:docs`; do not edit. -->',
    '',
    '## Flags of `skyhook operator`',
    '',
    'The Deployment in `config/manager/manager.yaml` runs `skyhook operator` and sets the environment variables below.',
    '',
    '```text',
    helpOf(repoRoot, ['operator', '--help']),
    '```',
    '',
    '## Environment settings',
    '',
    'Set them with `settings.<NAME>` in the Helm chart, or in the `env` of `config/manager/manager.yaml` ' +
      'with kustomize. Empty means the default shown.',
    '',
    '| setting | default and meaning | more |',
    '| --- | --- | --- |',
  ];
  for (const row of valueRows(repoRoot).filter((r) => r.key.startsWith('settings.'))) {
    const name = row.key.slice('settings.'.length);
    lines.push(`| \`${name}\` | ${cell(row.description)} | ${cell(nodeOpMeaning.get(name) ?? '')} |`);
  }
  lines.push(
    '',
    '## Environment of the node agent',
    '',
    'The agent runs in each stage Job (`skyhook agent`); the operator sets these for it. Package authors ' +
      'rarely need them: see [the agent](../packages/agent.md).',
    '',
    '| variable | default | meaning |',
    '| --- | --- | --- |',
  );
  for (const [name, value, meaning] of AGENT_ENV_DOC)
    lines.push(`| \`${name}\` | ${value ? `\`${cell(value)}\`` : ''} | ${cell(meaning)} |`);
  return `${lines.join('\n')}\n`;
}
