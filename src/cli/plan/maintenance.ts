/**
 * Node-initiated maintenance in `skyhook plan` (pure): which of the Skyhook's nodes hold or wait for
 * a MaintenancePolicy slot, in the same words as `kubectl skyhook maintenance status` (both read
 * cli/plugin/maintenance-view.ts), and what that means for the rollout: a maintenance holder is
 * cordoned under its `maintenance_<policy>` claim, which the rollout's cordon joins, and it counts
 * against a cluster DisruptionBudget like the rollout's own interrupts.
 */
import type { MaintenanceRow } from '../plugin/maintenance-view.js';

export interface PlannedMaintenance {
  node: string;
  policy?: string;
  state: MaintenanceRow['state'];
  /** What it means for the rollout, one sentence. */
  detail: string;
}

function detailOf(row: MaintenanceRow): string {
  const policy = `MaintenancePolicy ${row.policy ?? '?'}`;
  const stale = row.stale ? ` (its daemon last reported ${row.heartbeatAgeSeconds ?? '?'} s ago)` : '';
  switch (row.state) {
    case 'holding':
    case 'finishing':
      return `in maintenance under ${policy}${row.phase ? ` (${row.phase})` : ''}${stale}: cordoned under its claim, which this rollout's cordon joins; it counts against a cluster DisruptionBudget`;
    case 'queued':
      return `queued for maintenance under ${policy} (${row.reason ?? 'waiting'}${row.message ? `: ${row.message}` : ''})${stale}: once granted it is cordoned and drained, whatever this rollout does there`;
    case 'requested':
      return `asks for maintenance${row.policy ? ` under ${policy}` : ' (no MaintenancePolicy serves it yet)'}${stale}`;
    case 'orphaned':
      return `a maintenance cordon or grant is left behind${stale}: see \`kubectl skyhook maintenance status ${row.node}\``;
    case 'idle':
      return 'not in maintenance';
  }
}

/** The maintenance of the selected nodes, by node (pure); idle nodes are left out. */
export function plannedMaintenance(
  rows: readonly MaintenanceRow[],
  selected: ReadonlySet<string>,
): PlannedMaintenance[] {
  return rows
    .filter((row) => selected.has(row.node) && row.state !== 'idle')
    .map((row) => ({
      node: row.node,
      ...(row.policy ? { policy: row.policy } : {}),
      state: row.state,
      detail: detailOf(row),
    }));
}

/** The text section (empty when no selected node is in maintenance). */
export function renderMaintenance(items: readonly PlannedMaintenance[] | undefined): string[] {
  if (!items || items.length === 0) return [];
  const width = Math.max(...items.map((item) => item.node.length));
  return [
    '',
    'Node maintenance (MaintenancePolicy):',
    ...items.map((item) => `  ${item.node.padEnd(width)}  ${item.detail}`),
  ];
}
