/**
 * config/maintenance grants the daemon exactly the permissions of src/api/maintenance-daemon-rbac.ts,
 * and the DaemonSet keeps the properties docs/maintenance.md promises (every taint tolerated, the host
 * root mounted, hostPID and privileged for the reboot, the daemon's own ServiceAccount).
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  MAINTENANCE_DAEMON_CLUSTER_PERMISSIONS,
  MAINTENANCE_DAEMON_NAMESPACE_PERMISSIONS,
  MAINTENANCE_DAEMON_SERVICE_ACCOUNT,
} from '../../../src/api/maintenance-daemon-rbac.js';
import type { Permission } from '../../../src/api/operator-rbac.js';
import { CONFIG_DIR } from './repo-paths.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
type Doc = {
  kind: string;
  metadata: { name: string };
  rules?: Rule[];
  subjects?: { name: string }[];
  spec?: { template: { spec: Record<string, unknown> } };
};

const docs = (file: string): Doc[] =>
  parseAllDocuments(readFileSync(join(CONFIG_DIR, 'maintenance', file), 'utf8')).map((d) => d.toJSON() as Doc);

const flatten = (rules: Rule[]): string[] =>
  rules
    .flatMap((r) =>
      r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}|${res}|${[...r.verbs].sort().join(',')}`)),
    )
    .sort();
const fromPermissions = (permissions: readonly Permission[]): string[] =>
  permissions.map((p) => `${p.apiGroup}|${p.resource}|${[...p.verbs].sort().join(',')}`).sort();

describe('config/maintenance', () => {
  const rbac = docs('rbac.yaml');
  it('the ClusterRole and Role grant exactly the daemon permissions, bound to its own ServiceAccount', () => {
    expect(flatten(rbac.filter((d) => d.kind === 'ClusterRole').flatMap((d) => d.rules ?? []))).toEqual(
      fromPermissions(MAINTENANCE_DAEMON_CLUSTER_PERMISSIONS),
    );
    expect(flatten(rbac.filter((d) => d.kind === 'Role').flatMap((d) => d.rules ?? []))).toEqual(
      fromPermissions(MAINTENANCE_DAEMON_NAMESPACE_PERMISSIONS),
    );
    const subjects = rbac.flatMap((d) => d.subjects ?? []).map((s) => s.name);
    expect(subjects).toEqual([MAINTENANCE_DAEMON_SERVICE_ACCOUNT, MAINTENANCE_DAEMON_SERVICE_ACCOUNT]);
  });

  it('grants no write to nodes, pods or evictions and no wildcard', () => {
    const all = [...MAINTENANCE_DAEMON_CLUSTER_PERMISSIONS, ...MAINTENANCE_DAEMON_NAMESPACE_PERMISSIONS];
    expect(all.filter((p) => p.apiGroup === '*' || p.resource.includes('*') || p.verbs.includes('*'))).toEqual([]);
    expect(
      all.filter(
        (p) =>
          ['nodes', 'pods', 'pods/eviction'].includes(p.resource) &&
          p.verbs.some((v) => !['get', 'list', 'watch'].includes(v)),
      ),
    ).toEqual([]);
  });

  it('the DaemonSet tolerates every taint, mounts the host root and runs `skyhook maintenance` as its ServiceAccount', () => {
    const ds = docs('daemonset.yaml').find((d) => d.kind === 'DaemonSet')!;
    const pod = ds.spec!.template.spec as {
      serviceAccountName: string;
      hostPID: boolean;
      tolerations: unknown[];
      containers: {
        command: string[];
        args: string[];
        securityContext: { privileged: boolean };
        volumeMounts: { name: string; mountPath: string }[];
      }[];
      volumes: { name: string; hostPath?: { path: string } }[];
    };
    expect(pod.serviceAccountName).toBe(MAINTENANCE_DAEMON_SERVICE_ACCOUNT);
    expect(pod.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(pod.hostPID).toBe(true);
    const [container] = pod.containers;
    expect(container!.command).toEqual(['skyhook', 'maintenance']);
    expect(container!.args).toEqual(['--host-root', '/host', '--reboot-method', 'host']);
    expect(container!.securityContext.privileged).toBe(true);
    const hostRoot = pod.volumes.find((v) => v.hostPath?.path === '/');
    expect(container!.volumeMounts.find((m) => m.name === hostRoot?.name)?.mountPath).toBe('/host');
  });
});
