/**
 * The chart's maintenance daemon (config/maintenance/): off by default; on, `helm template` gives
 * exactly `kubectl kustomize config/maintenance` (Helm's labels aside), in the release namespace, and
 * the values reach the DaemonSet (image, resources, scheduling, extra environment).
 */
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { findBinaries } from '../../../src/sandbox/binaries.js';
import { CHART_DIR, helmOk, REPO_ROOT } from '../../helm-binary.js';

type Obj = {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: { template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } } };
  subjects?: { kind: string; namespace?: string }[];
};

const HELM_LABELS = [
  'helm.sh/chart',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
];
const MAINTENANCE_KINDS = ['DaemonSet', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];

const parse = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJSON() as Obj | null)
    .filter((o): o is Obj => !!o?.kind);

const isMaintenance = (o: Obj): boolean => o.metadata.name === 'skyhook-maintenance';

function byKey(objects: Obj[]): Record<string, Obj> {
  return Object.fromEntries(
    objects.map((obj) => {
      const copy = structuredClone(obj);
      for (const label of HELM_LABELS) delete copy.metadata.labels?.[label];
      return [`${copy.kind}/${copy.metadata.namespace ?? ''}/${copy.metadata.name}`, copy];
    }),
  );
}

const template = async (...args: string[]): Promise<Obj[]> =>
  parse(await helmOk(['template', 'skyhook', CHART_DIR, '-n', 'skyhook', ...args]));

describe('the chart and the maintenance daemon', () => {
  it('passes helm lint (strict) with it on', async () => {
    await helmOk([
      'lint',
      '--strict',
      CHART_DIR,
      '--set',
      'maintenanceDaemon.enabled=true,maintenanceDaemon.hostNetwork=true',
    ]);
  });

  it('renders none of it by default', async () => {
    expect((await template()).filter(isMaintenance)).toEqual([]);
  });

  it('renders exactly config/maintenance when enabled (the image is the chart default, the same as config/)', async () => {
    const rendered = (await template('--set', 'maintenanceDaemon.enabled=true')).filter(isMaintenance);
    const kustomized = parse(
      execFileSync(findBinaries().kubectl, ['kustomize', join(REPO_ROOT, 'config/maintenance')], { encoding: 'utf8' }),
    );
    expect(rendered.map((o) => o.kind).sort()).toEqual([...MAINTENANCE_KINDS].sort());
    expect(byKey(rendered)).toEqual(byKey(kustomized));
  });

  it('puts it in the release namespace and applies the values', async () => {
    const objects = parse(
      await helmOk([
        'template',
        'ops',
        CHART_DIR,
        '-n',
        'node-ops',
        '--set',
        'maintenanceDaemon.enabled=true,image.repository=r.example/s,image.tag=1.2.3,maintenanceDaemon.hostNetwork=true,maintenanceDaemon.priorityClassName=system-node-critical,maintenanceDaemon.nodeSelector.pool=gpu,maintenanceDaemon.resources.limits.memory=300Mi,maintenanceDaemon.extraEnv[0].name=LOG_LEVEL2,maintenanceDaemon.extraEnv[0].value=debug',
      ]),
    ).filter(isMaintenance);
    for (const obj of objects.filter((o) => !o.kind.startsWith('Cluster')))
      expect(obj.metadata.namespace).toBe('node-ops');
    for (const subject of objects.flatMap((o) => o.subjects ?? [])) expect(subject.namespace).toBe('node-ops');
    const pod = objects.find((o) => o.kind === 'DaemonSet')!.spec!.template.spec;
    const container = pod.containers[0]!;
    expect(container['image']).toBe('r.example/s:1.2.3');
    expect(container['resources']).toEqual({ limits: { memory: '300Mi' } });
    expect((container['env'] as { name: string }[]).at(-1)).toEqual({ name: 'LOG_LEVEL2', value: 'debug' });
    expect(pod).toMatchObject({
      hostNetwork: true,
      dnsPolicy: 'ClusterFirstWithHostNet',
      priorityClassName: 'system-node-critical',
      nodeSelector: { pool: 'gpu' },
      tolerations: [{ operator: 'Exists' }],
    });
  });
});
