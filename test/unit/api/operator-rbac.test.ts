import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  OPERATOR_CLUSTER_PERMISSIONS,
  OPERATOR_NAMESPACE_PERMISSIONS,
  type Permission,
} from '../../../src/api/operator-rbac.js';
import { CONFIG_DIR } from './repo-paths.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

function rulesOf(file: string, kind: string): Rule[] {
  const docs = parseAllDocuments(readFileSync(join(CONFIG_DIR, 'rbac', file), 'utf8')).map(
    (doc) => doc.toJSON() as { kind: string; rules?: Rule[] },
  );
  return docs.filter((doc) => doc.kind === kind).flatMap((doc) => doc.rules ?? []);
}

/** One line per (group, resource) with sorted verbs, so rule layout does not matter. */
function flatten(rules: Rule[]): string[] {
  return rules
    .flatMap((rule) =>
      rule.apiGroups.flatMap((group) =>
        rule.resources.map((resource) => `${group}|${resource}|${[...rule.verbs].sort().join(',')}`),
      ),
    )
    .sort();
}
const fromPermissions = (permissions: readonly Permission[]): string[] =>
  permissions.map((p) => `${p.apiGroup}|${p.resource}|${[...p.verbs].sort().join(',')}`).sort();

describe('config/rbac grants exactly the operator permissions of src/api/operator-rbac.ts', () => {
  it('ClusterRole', () =>
    expect(flatten(rulesOf('role.yaml', 'ClusterRole'))).toEqual(fromPermissions(OPERATOR_CLUSTER_PERMISSIONS)));
  it('leader-election Role', () =>
    expect(flatten(rulesOf('leader-election-role.yaml', 'Role'))).toEqual(
      fromPermissions(OPERATOR_NAMESPACE_PERMISSIONS),
    ));
  it('uses no wildcard and no resource appears twice', () => {
    const all = [...OPERATOR_CLUSTER_PERMISSIONS, ...OPERATOR_NAMESPACE_PERMISSIONS];
    expect(all.filter((p) => p.apiGroup === '*' || p.resource.includes('*') || p.verbs.includes('*'))).toEqual([]);
    const keys = all.map((p) => `${p.apiGroup}|${p.resource}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
