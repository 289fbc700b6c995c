/** The plan as text: a headline, the nodes table (batch, stages, cordon, drain, interrupt), then blockers and the nodes left out. */
import { renderTable, type Column } from '../plugin/output.js';
import { renderMaintenance } from './maintenance.js';
import type { PlannedNode, PlanReport } from './report.js';

const yesNo = (value: boolean): string => (value ? 'yes' : 'no');

const COLUMNS: Column<PlannedNode>[] = [
  { header: 'BATCH', value: (n) => String(n.batch ?? '-') },
  { header: 'NODE', value: (n) => n.node },
  { header: 'ON APPLY', value: (n) => n.statusOnApply },
  { header: 'STAGES', value: (n) => n.stages || '-' },
  { header: 'CORDON', value: (n) => yesNo(n.cordon) },
  { header: 'DRAIN', value: (n) => yesNo(n.drain) },
  { header: 'INTERRUPT', value: (n) => n.interrupt ?? '-' },
  { header: 'AT END', value: (n) => n.statusAtEnd },
];

export function renderPlan(report: PlanReport): string {
  const budgets = report.compartments
    .map((c) => `at most ${c.ceiling} of ${c.matched} at once in compartment ${c.name}`)
    .join(', ');
  const lines = [
    `Skyhook ${report.skyhook} (priority ${report.priority}) selects ${report.selected} of ${report.total} node(s)${budgets ? `; ${budgets}` : ''}.`,
  ];
  if (report.paused)
    lines.push('It is paused (annotation skyhook.nvidia.com/pause): nothing starts until it is resumed.');
  if (report.disabled)
    lines.push('It is disabled (annotation skyhook.nvidia.com/disable): nothing starts until it is enabled.');
  for (const problem of report.problems) lines.push(`Spec problem (nothing starts until fixed): ${problem}`);
  const windows = report.maintenanceWindows;
  if (windows) {
    const state = windows.open
      ? 'open now for every node'
      : `closed for ${windows.closedNodes} node(s), which start no interrupt before ${windows.nextOpen ?? 'a window opens (none does in the next two weeks)'}`;
    lines.push(`Maintenance windows (${windows.sources.join('; ')}): ${state}.`);
  }
  lines.push('', report.nodes.length > 0 ? renderTable(report.nodes, COLUMNS) : 'No node is selected.');
  const blocked = report.nodes.filter((node) => node.blockers.length > 0);
  if (blocked.length > 0) {
    lines.push('', 'Held back:');
    const width = Math.max(...blocked.map((node) => node.node.length));
    for (const node of blocked)
      for (const blocker of node.blockers) lines.push(`  ${node.node.padEnd(width)}  ${blocker}`);
  }
  lines.push(...renderMaintenance(report.maintenance));
  if (report.notSelected.length > 0) lines.push('', `Not selected: ${report.notSelected.join(', ')}`);
  if (report.truncated)
    lines.push(
      '',
      'The rollout did not settle within the simulation limit; the batches above are the first ones only.',
    );
  lines.push(
    '',
    report.completes
      ? 'Every selected node would end complete.'
      : 'Not every selected node would end complete (see Held back).',
  );
  return lines.join('\n');
}
