/** `status [skyhook]`: the Skyhooks with their rollout status, as `kubectl get skyhooks` plus pause and disable. */
import { API_GROUP, SKYHOOK_ANNOTATIONS } from '../../api/names.js';
import type { Skyhook } from '../../api/skyhook.js';
import type { PluginContext } from './context.js';
import { render, type Column } from './output.js';
import { nameOf } from '../../api/object-meta.js';

export interface SkyhookSummary {
  name: string;
  status: string;
  priority: number;
  nodesInProgress: number;
  completeNodes: string;
  packages: string;
  paused: boolean;
  disabled: boolean;
  deploymentPolicy?: string;
  /** When the next maintenance window opens, while nodes wait for one to start an interrupt. */
  nextMaintenanceWindow?: string;
}

export function summarizeSkyhook(skyhook: Skyhook): SkyhookSummary {
  const annotations = skyhook.metadata.annotations ?? {};
  const summary: SkyhookSummary = {
    name: nameOf(skyhook),
    status: skyhook.status?.status ?? 'unknown',
    priority: skyhook.spec.priority ?? 200,
    nodesInProgress: skyhook.status?.nodesInProgress ?? 0,
    completeNodes: skyhook.status?.completeNodes ?? '0/0',
    packages: skyhook.status?.packageList ?? '',
    paused: annotations[SKYHOOK_ANNOTATIONS.pause] === 'true',
    disabled: annotations[SKYHOOK_ANNOTATIONS.disable] === 'true',
  };
  if (skyhook.spec.deploymentPolicy) summary.deploymentPolicy = skyhook.spec.deploymentPolicy;
  if (skyhook.status?.nextMaintenanceWindow) summary.nextMaintenanceWindow = skyhook.status.nextMaintenanceWindow;
  return summary;
}

/** kubectl's `-o name` form: `<resource>.<group>/<name>`. */
export const skyhookName = (s: SkyhookSummary): string => `skyhook.${API_GROUP}/${s.name}`;

const yesNo = (value: boolean): string => (value ? 'yes' : 'no');

export const SKYHOOK_COLUMNS: Column<SkyhookSummary>[] = [
  { header: 'NAME', value: (s) => s.name },
  { header: 'STATUS', value: (s) => s.status },
  { header: 'PRIORITY', value: (s) => String(s.priority) },
  { header: 'IN-PROGRESS', value: (s) => String(s.nodesInProgress) },
  { header: 'COMPLETE', value: (s) => s.completeNodes },
  { header: 'PAUSED', value: (s) => yesNo(s.paused) },
  { header: 'DISABLED', value: (s) => yesNo(s.disabled) },
  { header: 'PACKAGES', value: (s) => s.packages || '-' },
  { header: 'POLICY', value: (s) => s.deploymentPolicy ?? '-', wide: true },
  { header: 'NEXT-WINDOW', value: (s) => s.nextMaintenanceWindow ?? '-', wide: true },
];

export async function runStatus(ctx: PluginContext, positionals: string[]): Promise<number> {
  const skyhooks =
    positionals.length > 0
      ? await Promise.all(positionals.map((name) => ctx.getSkyhook(name)))
      : await ctx.listSkyhooks();
  if (skyhooks.length === 0 && ['table', 'wide', 'name'].includes(ctx.options.output)) {
    console.error('no Skyhooks in this cluster');
    return 0;
  }
  console.log(render(skyhooks.map(summarizeSkyhook), SKYHOOK_COLUMNS, ctx.options.output, skyhookName));
  return 0;
}
