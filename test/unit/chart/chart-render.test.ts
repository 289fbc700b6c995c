/**
 * The chart, rendered by the helm that `npm run cluster:build` builds (no control plane needed):
 * `helm lint` passes; with the default values `helm template` gives exactly the objects of
 * `kubectl kustomize config/default` (plus Helm's labels; the namespace comes from --create-namespace)
 * and, with monitoring on, those of config/monitoring; the values reach the Deployment; the schema
 * refuses what the operator would refuse.
 */
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { findBinaries } from '../../../src/sandbox/binaries.js';
import { CHART_DIR, helmOk, REPO_ROOT, runHelm } from '../../helm-binary.js';

type Obj = {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  subjects?: { kind: string; namespace?: string }[];
};
type Container = {
  name: string;
  image: string;
  env: { name: string; value?: string }[];
  resources: Record<string, unknown>;
};
type PodSpec = Record<string, unknown> & { containers: Container[] };

const HELM_LABELS = [
  'helm.sh/chart',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
];

function parseObjects(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJSON() as Obj | null)
    .filter((obj): obj is Obj => !!obj?.kind);
}

const key = (obj: Obj): string => `${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;

/** Objects by kind/namespace/name, without the labels Helm adds. */
function byKey(objects: Obj[]): Record<string, Obj> {
  const out: Record<string, Obj> = {};
  for (const obj of objects) {
    const copy = structuredClone(obj);
    for (const label of HELM_LABELS) delete copy.metadata.labels?.[label];
    out[key(copy)] = copy;
  }
  return out;
}

function kustomize(dir: string): Obj[] {
  const kubectl = findBinaries().kubectl;
  return parseObjects(execFileSync(kubectl, ['kustomize', join(REPO_ROOT, dir)], { encoding: 'utf8' }));
}

async function template(...args: string[]): Promise<Obj[]> {
  return parseObjects(await helmOk(['template', 'skyhook', CHART_DIR, '-n', 'skyhook', ...args]));
}

function deployment(objects: Obj[]): { pod: PodSpec; container: Container; replicas: number } {
  const found = objects.find((o) => o.kind === 'Deployment');
  if (!found?.spec) throw new Error('no Deployment rendered');
  const pod = (found.spec['template'] as { spec: PodSpec }).spec;
  return { pod, container: pod.containers[0]!, replicas: found.spec['replicas'] as number };
}

const envOf = (c: Container): Record<string, string | undefined> =>
  Object.fromEntries(c.env.map((e) => [e.name, e.value]));

describe('the Helm chart', () => {
  it('passes helm lint (strict) with the default values and with every option on', async () => {
    await helmOk(['lint', '--strict', CHART_DIR]);
    await helmOk([
      'lint',
      '--strict',
      CHART_DIR,
      '--set',
      'serviceMonitor.enabled=true,prometheusRule.enabled=true,grafanaDashboard.enabled=true,hostNetwork=true',
    ]);
  });

  it('renders exactly config/default with the default values (namespace aside), CRDs included', async () => {
    const rendered = byKey(await template('--include-crds'));
    const expected = byKey(kustomize('config/default').filter((o) => o.kind !== 'Namespace'));
    expect(Object.keys(expected).length).toBeGreaterThanOrEqual(11);
    expect(Object.keys(rendered).sort()).toEqual(Object.keys(expected).sort());
    expect(rendered).toEqual(expected);
  });

  it('renders exactly config/monitoring when the ServiceMonitor, PrometheusRule and dashboard are on', async () => {
    const all = await template(
      '--set',
      'serviceMonitor.enabled=true,prometheusRule.enabled=true,grafanaDashboard.enabled=true',
    );
    const rendered = byKey(all.filter((o) => ['ServiceMonitor', 'PrometheusRule', 'ConfigMap'].includes(o.kind)));
    expect(rendered).toEqual(byKey(kustomize('config/monitoring')));
    const dashboard = all.find((o) => o.kind === 'ConfigMap')?.data?.['grafana-dashboard.json'];
    expect(dashboard).toBe(readFileSync(join(REPO_ROOT, 'config/monitoring/grafana-dashboard.json'), 'utf8'));
  });

  it('renders no monitoring objects by default (they need the Prometheus Operator)', async () => {
    const kinds = (await template()).map((o) => o.kind);
    expect(kinds.filter((k) => ['ServiceMonitor', 'PrometheusRule', 'ConfigMap'].includes(k))).toEqual([]);
  });

  it('puts every object and RBAC subject in the release namespace', async () => {
    const objects = parseObjects(await helmOk(['template', 'ops', CHART_DIR, '-n', 'node-ops']));
    for (const obj of objects.filter((o) => !o.kind.startsWith('Cluster')))
      expect(`${key(obj)} ${obj.metadata.namespace}`).toBe(`${key(obj)} node-ops`);
    const subjects = objects.flatMap((o) => o.subjects ?? []);
    expect(subjects.length).toBe(2);
    for (const subject of subjects) expect(subject.namespace).toBe('node-ops');
  });

  it('sets image, pull secrets, resources, replicas, scheduling and every operator setting from the values', async () => {
    const values = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as {
      properties: { settings: { properties: Record<string, unknown> } };
    };
    const names = Object.keys(values.properties.settings.properties);
    const settings = names.flatMap((name) => ['--set-string', `settings.${name}=${name.toLowerCase()}-value`]);
    settings.push('--set-string', 'settings.LOG_LEVEL=debug', '--set-string', 'settings.COPY_DIR_ROOT=/opt/skyhook');
    settings.push('--set-string', 'settings.AGENT_LOG_ROOT=/opt/log', '--set-string', 'settings.LEADER_ELECTION=false');
    settings.push('--set-string', 'settings.RUNTIME_REQUIRED_TAINT=a=b:NoSchedule');
    settings.push('--set-string', 'settings.NODEOP_JOB_RUNNER=kubernetes');
    settings.push('--set-string', 'settings.REGISTRY_CA_FILE=/etc/registry/ca.pem');
    for (const n of ['JOB_BACKOFF_LIMIT', 'NODEOP_STUCK_POD_TIMEOUT_SECONDS', 'NODEOP_REBOOT_TIMEOUT_SECONDS'])
      settings.push('--set-string', `settings.${n}=7`);
    const objects = await template(
      ...settings,
      '--set',
      'image.repository=registry.example/skyhook,image.tag=9.9.9,replicaCount=3,imagePullSecrets[0].name=regcred',
      '--set',
      'resources.limits.memory=1Gi,nodeSelector.pool=system,hostNetwork=true,priorityClassName=system-cluster-critical',
      '--set',
      'strategy.type=RollingUpdate,strategy.rollingUpdate.maxSurge=0,strategy.rollingUpdate.maxUnavailable=1',
      '--set',
      'topologySpreadConstraints[0].maxSkew=1,topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone,topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway',
      '--set',
      'extraEnv[0].name=NODE_OPTIONS,extraEnv[0].value=--max-old-space-size=700,extraEnv[1].name=EXTRA,extraEnv[1].value=x',
    );
    const { pod, container, replicas } = deployment(objects);
    expect(replicas).toBe(3);
    expect(objects.find((o) => o.kind === 'Deployment')?.spec?.['strategy']).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 0, maxUnavailable: 1 },
    });
    expect(container.image).toBe('registry.example/skyhook:9.9.9');
    expect(pod['imagePullSecrets']).toEqual([{ name: 'regcred' }]);
    expect(container.resources).toEqual({ limits: { memory: '1Gi' } });
    expect(pod['nodeSelector']).toEqual({ pool: 'system' });
    expect(pod['hostNetwork']).toBe(true);
    expect(pod['priorityClassName']).toBe('system-cluster-critical');
    expect(pod['topologySpreadConstraints']).toEqual([
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
    ]);
    expect(pod['affinity']).toBeDefined();
    const env = envOf(container);
    for (const name of names.filter((n) => n !== 'NODE_OPTIONS')) expect(env[name]).toBeDefined();
    expect(env['LOG_LEVEL']).toBe('debug');
    expect(env['AGENT_IMAGE']).toBe('agent_image-value');
    expect(env['JOB_BACKOFF_LIMIT']).toBe('7');
    expect(env['NODE_OPTIONS']).toBe('--max-old-space-size=700');
    expect(env['EXTRA']).toBe('x');
    expect(container.env.filter((e) => e.name === 'NODE_OPTIONS')).toHaveLength(1);
    expect(container.env.map((e) => e.name).slice(0, 2)).toEqual(['NAMESPACE', 'POD_NAME']);
  });

  it('runs the agent from the operator image unless AGENT_IMAGE is set', async () => {
    const { container } = deployment(await template('--set', 'image.repository=r.example/s,image.tag=1.2.3'));
    expect(envOf(container)['AGENT_IMAGE']).toBe('r.example/s:1.2.3');
  });

  it("adds extra volumes and mounts after config/manager's /tmp", async () => {
    const { pod, container } = deployment(
      await template(
        '--set',
        'extraVolumes[0].name=extra,extraVolumes[0].emptyDir.medium=Memory,extraVolumeMounts[0].name=extra,extraVolumeMounts[0].mountPath=/extra',
      ),
    );
    expect(pod['volumes']).toEqual([
      { name: 'tmp', emptyDir: {} },
      { name: 'extra', emptyDir: { medium: 'Memory' } },
    ]);
    expect((container as unknown as { volumeMounts: unknown[] }).volumeMounts).toEqual([
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'extra', mountPath: '/extra' },
    ]);
  });

  it('leaves out the PodDisruptionBudget when disabled', async () => {
    const kinds = (await template('--set', 'podDisruptionBudget.enabled=false')).map((o) => o.kind);
    expect(kinds).not.toContain('PodDisruptionBudget');
  });

  it.each([
    ['an unknown value', ['--set', 'replicas=2']],
    ['an unknown setting', ['--set', 'settings.NO_SUCH_SETTING=1']],
    ['a log level the operator refuses', ['--set', 'settings.LOG_LEVEL=loud']],
    ['a relative COPY_DIR_ROOT', ['--set', 'settings.COPY_DIR_ROOT=var/lib']],
    ['a malformed taint', ['--set', 'settings.RUNTIME_REQUIRED_TAINT=key:NoSchedule']],
    ['a bad pull policy', ['--set', 'image.pullPolicy=Sometimes']],
  ])('refuses %s (values.schema.json)', async (_what, args) => {
    const result = await runHelm(['template', 'skyhook', CHART_DIR, ...args]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/schema/i);
  });
});
