/**
 * The chart's one source is config/: these are the files `npm run gen:chart` copies byte for byte
 * into chart/ (CRDs into chart/crds/, which Helm installs but never deletes or upgrades; the other
 * manifests into chart/files/, which the templates load and patch with the values). Helm cannot read
 * files outside the chart directory, hence copies; test/unit/chart/chart-sources.test.ts fails when
 * a copy differs from its source.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** [source under the repository, destination under the repository]. */
export function chartCopies(repoRoot: string): Array<readonly [string, string]> {
  const crds = readdirSync(join(repoRoot, 'config/crd'))
    .filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml')
    .sort()
    .map((name) => [`config/crd/${name}`, `chart/crds/${name}`] as const);
  const files = [
    'config/manager/manager.yaml',
    'config/rbac/service-account.yaml',
    'config/rbac/role.yaml',
    'config/rbac/role-binding.yaml',
    'config/rbac/leader-election-role.yaml',
    'config/rbac/user-roles.yaml',
    'config/default/metrics-service.yaml',
    'config/default/pod-disruption-budget.yaml',
    'config/monitoring/service-monitor.yaml',
    'config/monitoring/prometheus-rule.yaml',
    'config/monitoring/grafana-dashboard.json',
    'config/maintenance/rbac.yaml',
    'config/maintenance/daemonset.yaml',
  ].map((path) => [path, `chart/files/${path.slice('config/'.length)}`] as const);
  return [...crds, ...files];
}

/** Every chart file that must equal a config/ file: destination → expected bytes. */
export function expectedChartFiles(repoRoot: string): Map<string, Buffer> {
  return new Map(chartCopies(repoRoot).map(([from, to]) => [to, readFileSync(join(repoRoot, from))]));
}
