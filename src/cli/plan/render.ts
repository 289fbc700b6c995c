/** The plan as text: a headline, the batches table, then blockers and the nodes left out. */
import { renderTable, type Column } from '../plugin/output.js';
import type { PlannedNode, PlanReport } from './report.js';

const COLUMNS: Column<PlannedNode>[] = [
  { header: 'BATCH', value: (n) => String(n.batch ?? '-') },
  { header: 'NODE', value: (n) => n.node },
  { header: 'NOW', value: (n) => n.statusNow },
  { header: 'STAGES', value: (n) => n.stages || '-' },
  { header: 'CORDON+DRAIN', value: (n) => (n.cordonAndDrain ? 'yes' : 'no') },
  { header: 'INTERRUPT', value: (n) => n.interrupt ?? '-' },
  { header: 'END', value: (n) => n.statusAtEnd },
];

export function renderPlan(report: PlanReport): string {
  const lines = [
    `Skyhook ${report.skyhook} (priority ${report.priority}) selects ${report.selected} of ${report.total} node(s); at most ${report.budget.ceiling} in progress at once (${report.budget.source}).`,
  ];
  if (report.paused) lines.push('It is paused (annotation skyhook.nvidia.com/pause): nothing starts until it is resumed.');
  if (report.disabled) lines.push('It is disabled (annotation skyhook.nvidia.com/disable): nothing starts until it is enabled.');
  for (const problem of report.problems) lines.push(`Spec problem (nothing starts until fixed): ${problem}`);
  const starting = report.nodes.filter((node) => node.batch !== undefined);
  lines.push('');
  lines.push(starting.length > 0 ? renderTable(report.nodes, COLUMNS) : 'No node would start.');
  const complete = report.nodes.filter((node) => node.batch === undefined && node.statusAtEnd === 'complete' && node.blockers.length === 0);
  if (complete.length > 0) lines.push('', `Already complete: ${complete.map((node) => node.node).join(', ')}`);
  const blocked = report.nodes.filter((node) => node.blockers.length > 0);
  if (blocked.length > 0) {
    lines.push('', 'Blocked:');
    const width = Math.max(...blocked.map((node) => node.node.length));
    for (const node of blocked) for (const blocker of node.blockers) lines.push(`  ${node.node.padEnd(width)}  ${blocker}`);
  }
  if (report.notSelected.length > 0) lines.push('', `Not selected: ${report.notSelected.join(', ')}`);
  if (report.truncated) lines.push('', 'The rollout did not settle within the simulation limit; the batches above are the first ones only.');
  lines.push('', report.completes ? 'Every selected node would end complete.' : 'Not every selected node would end complete (see Blocked).');
  return lines.join('\n');
}
